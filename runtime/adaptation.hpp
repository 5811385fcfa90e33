#pragma once
// Online adaptation (docs/RUNTIME.md): a workload class the profile does not hold exactly is tuned over the
// application's own calls by one of the tuner's strategies (tuner/strategy.hpp; "local", a first-improvement
// local search, by default). The candidates are first the defaults (the reference), where the calls start
// (the profile's nearest entry) and its runners-up, then what the strategy proposes. A candidate's first run
// is its evaluation, which the strategy observes at once; later runs come from the calls that run the
// fastest, which is chosen by median. A candidate's first result is compared with the reference's on the same
// inputs before any of its times counts; one that differs is rejected for good (the strategy observes a
// failure). The reference is the defaults until a faster candidate has agreed with them, then the fastest
// verified one: every verified candidate agreed with the defaults or with one that did, and a check costs the
// fastest variant's time rather than the defaults' (the join's defaults take 250 times its tuned variant's
// time). A call explores (runs a candidate not yet evaluated) only while the exploring calls, and what they
// cost beyond the fastest's time, stay within the share the application allows; the other calls run the
// fastest by median.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/engine.hpp"
#include "harness/operators/bound_run.hpp"
#include "tuner/strategy.hpp"

namespace varex::runtime {

struct Candidate {
  variants::Params params;
  std::string variant;  // varex's variant id
  bool verified = false;
  bool rejected = false;
  bool observed = false;   // evaluated: the strategy has observed its first run or its rejection
  std::string why;         // of a rejection
  std::vector<double> ms;  // the device time of each run
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
  // The most proposals one call looks through for one that can run on its buffers.
  static constexpr std::size_t kProposalsPerCall = 64;
  using NameOf = std::function<std::string(const variants::Params&)>;  // a variant's id
  // Whether a variant can run on the call's buffers.
  using Runnable = std::function<bool(const variants::Params&)>;

  // `start[0]` is the defaults (verified: the first reference), then the profile's entry and its runners-up;
  // the calls start with start[first]. `strategy` names one of the tuner's (tuner::strategy_names()).
  // UsageError for another name.
  ClassTuner(variants::Space space, const std::vector<variants::Params>& start, std::size_t first,
             const std::string& strategy, double explore_share, NameOf name_of);

  // What one call runs: `returns`, the candidate whose result the call returns, and where a candidate is
  // still unchecked, `checks`, which runs after it on the same inputs and is compared with its result.
  struct Call {
    std::size_t returns = 0;
    std::optional<std::size_t> checks;
    bool explore = false;
    double exploit_ms = 0;  // what a call of the fastest candidate takes (its median; 0 before any run)
  };
  Call plan_call(const Runnable& runnable);
  // How the checked candidate came out: `why` it differs or failed (empty: it agreed), its time if it ran.
  struct Check {
    std::string why;
    std::optional<double> ms;
  };
  // Records a planned call: the returned candidate's time, and the check where there was one.
  void finish_call(const Call& call, double returns_ms, const std::optional<Check>& check = std::nullopt);

  const std::vector<Candidate>& candidates() const { return candidates_; }
  const variants::Space& space() const { return search_->space(); }
  // The candidate a new one is checked against: the fastest verified one by median (0, the defaults, before
  // any other has agreed with them).
  std::size_t reference() const;
  ClassReport report() const;

 private:
  std::size_t fastest() const;  // by median among those run and not rejected; `first_` before any run
  // The candidate an exploring call runs: the next start point not yet evaluated, else the strategy's next
  // proposal that can run; nullopt: none.
  std::optional<std::size_t> explore_target(const Runnable& runnable);
  std::size_t add(const variants::Params& params);
  void observe(std::size_t index);  // the strategy learns of a candidate's first run, or its rejection

  // Owned apart: the strategy keeps a reference to its space, and a ClassTuner moves.
  std::unique_ptr<tuner::SearchSpace> search_;
  std::unique_ptr<tuner::Strategy> strategy_;
  NameOf name_of_;
  std::vector<Candidate> candidates_;
  std::vector<tuner::Proposal> proposed_;  // the strategy's batch not yet taken
  std::size_t first_;
  double share_;
  std::vector<double> calls_ms_;
  double total_ms_ = 0;  // calls_ms_'s sum
  std::uint64_t exploring_calls_ = 0;
  double exploring_ms_ = 0;  // the exploring calls' time beyond the fastest candidate's (ClassReport)
};

// Why two results of one call differ (empty: they agree), over the parts each declares (a bitmap: its rows'
// bits): ranges compared as they are, rows of no order as sorted multisets. Downloads what it compares.
std::string result_difference(harness::Engine& engine, const harness::DeviceResult& reference,
                              const harness::DeviceResult& candidate);

}  // namespace varex::runtime
