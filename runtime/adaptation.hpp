#pragma once
// Online adaptation (docs/RUNTIME.md): a workload class the profile does not hold exactly is tuned over the
// application's own calls. A class's candidates are first the defaults (the reference), where the calls start
// (the profile's nearest entry, its runners-up) and that entry's neighbours in the space. A bounded bandit
// picks each call's variant: it explores a candidate still in the running (measured fewer than
// kRunsToCompete times and not far slower than the fastest) only while the exploring calls, and what they
// cost beyond the fastest's time, stay within the share the application allows, and otherwise runs the
// fastest by median. A first-improvement local search moves with the best: when a candidate beats where the
// calls started, or when no candidate is left in the running, the fastest one's neighbours join and are
// tried first. A candidate's first result is compared with the reference's on the same inputs before any of
// its times counts; one that differs is rejected for good. The reference is the defaults until a faster
// candidate has agreed with them, then the fastest verified one: every verified candidate agreed with the
// defaults or with one that did, and a check costs the fastest variant's time rather than the defaults' (the
// join's defaults take 250 times its tuned variant's time).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/engine.hpp"
#include "harness/operators/bound_run.hpp"

namespace varex::runtime {

struct Candidate {
  variants::Params params;
  std::string variant;  // varex's variant id
  bool verified = false;
  bool rejected = false;
  std::string why;         // of a rejection
  std::vector<double> ms;  // the device time of each run
  std::size_t round = 0;   // the widening of the search that added it (0: the first candidates)
  double median() const;
};

struct ClassReport {
  std::uint64_t calls = 0;
  std::uint64_t exploring_calls = 0;
  std::size_t candidates = 0, verified = 0, rejected = 0;
  std::size_t settled = 0;  // index of the settled candidate
  double settled_ms = 0;
  double regret_ms = 0;     // the calls' device time above settled_ms, summed
  double total_ms = 0;      // the calls' device time, checking runs included
  double exploring_ms = 0;  // what the exploring calls took beyond a call of the fastest candidate then
};

class ClassTuner {
 public:
  static constexpr std::size_t kRunsToCompete = 3;
  // A candidate whose first run is this many times the fastest median runs no more (a cut-off).
  static constexpr double kCutoff = 1.5;
  // The candidates around one (its neighbours in the space that can run on the calls' buffers).
  using Neighbours = std::function<std::vector<Candidate>(const Candidate&)>;

  // candidates[0] is the defaults, verified (the first reference); the calls start with candidates[first].
  ClassTuner(std::vector<Candidate> candidates, std::size_t first, double explore_share);

  // What one call runs: `returns`, the candidate whose result the call returns, and where a candidate is
  // still unchecked, `checks`, which runs after it on the same inputs and is compared with its result.
  struct Call {
    std::size_t returns = 0;
    std::optional<std::size_t> checks;
    bool explore = false;
    double exploit_ms = 0;  // what a call of the fastest candidate takes (its median; 0 before any run)
  };
  // The next call; `neighbours` widens the search when no candidate is left in the running.
  Call plan_call(const Neighbours& neighbours);
  // How the checked candidate came out: `why` it differs or failed (empty: it agreed), its time if it ran.
  struct Check {
    std::string why;
    std::optional<double> ms;
  };
  // Records a planned call: the returned candidate's time, and the check where there was one.
  void finish_call(const Call& call, double returns_ms, const std::optional<Check>& check = std::nullopt);

  const std::vector<Candidate>& candidates() const { return candidates_; }
  // The candidate a new one is checked against: the fastest verified one by median (0, the defaults, before
  // any other has agreed with them).
  std::size_t reference() const;
  ClassReport report() const;

 private:
  std::size_t fastest() const;  // by median among those run and not rejected; `first_` before any run
  bool in_running(std::size_t index, std::size_t fastest) const;
  std::size_t explore_target(std::size_t exploit) const;  // candidates_.size(): none
  struct Pick {
    std::size_t index = 0;
    bool explore = false;
  };
  Pick next(const Neighbours& neighbours);

  std::vector<Candidate> candidates_;
  std::size_t first_;
  double share_;
  std::vector<double> calls_ms_;
  double total_ms_ = 0;  // calls_ms_'s sum
  std::string start_;    // the variant the calls started with (the first candidates are its neighbours)
  std::vector<std::string> expanded_;  // the variants whose neighbours joined
  std::uint64_t exploring_calls_ = 0;
  double exploring_ms_ = 0;  // the exploring calls' time beyond the fastest candidate's (ClassReport)
};

// Why two results of one call differ (empty: they agree), over the parts each declares (a bitmap: its rows'
// bits): ranges compared as they are, rows of no order as sorted multisets. Downloads what it compares.
std::string result_difference(harness::Engine& engine, const harness::DeviceResult& reference,
                              const harness::DeviceResult& candidate);

}  // namespace varex::runtime
