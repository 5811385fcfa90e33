#pragma once
// The contract every search strategy keeps: propose the next variants, observe their measurements, say
// when there is nothing left to propose. The driver (tuner/tuner.hpp) owns the budget; the evaluator
// (a device, or recorded measurements) owns measuring. A new strategy is one file in tuner/strategies/
// plus a line in tuner/strategies/registry.cpp.
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "variants/space.hpp"

namespace varex::tuner {

// How thoroughly to measure: 0 is the session's full protocol; k > 0 caps the timed repetitions at k (a
// cheap, noisier look, as successive halving takes first).
using Fidelity = int;

struct Proposal {
  variants::Params params;
  Fidelity fidelity = 0;
};

// What a strategy learns of one evaluation. `value` is the session's objective (base/objective.hpp): the
// median kernel time by default, else the energy per repetition or the energy-delay product. Lower is
// better whatever the objective; the strategies' comments say "fastest" for "lowest".
struct Observation {
  variants::Params params;
  Fidelity fidelity = 0;
  // Verified, timed, and valued: failed and wrong variants, and those whose energy an energy objective needs
  // but the meter did not give, are observed with ok = false.
  bool ok = false;
  double value = std::numeric_limits<double>::infinity();
  double rel_ci = 0;  // the value's uncertainty relative to it (the median's confidence interval for time)
  double cost_s = 0;
  // Timed once only, far slower than the incumbent: `value` is projected from that one repetition
  // (tuner/tuner.hpp).
  bool cut_off = false;
};

// The strategies' view of the space: lazy sampling of valid points that were not proposed before. Owns
// the random generator, so that a run is deterministic given its seed.
class SearchSpace {
 public:
  SearchSpace(variants::Space space, std::uint64_t seed);

  const variants::Space& space() const { return space_; }
  std::mt19937_64& rng() { return rng_; }
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

  // A random valid point not yet proposed; nullopt when none is left.
  std::optional<variants::Params> random_unseen();
  // Valid points one tunable away from `params` that were not proposed yet.
  std::vector<variants::Params> unseen_neighbours(const variants::Params& params) const;
  bool seen(const variants::Params& params) const;
  void mark(const variants::Params& params);
  std::size_t seen_count() const { return seen_.size(); }

  // The programs (compile parts) measured so far. Near the end of a budget that cannot pay for another
  // compilation the driver sets `only_compiled`: then random_unseen and unseen_neighbours give only
  // variants of those programs, which cost their runs alone (a strategy needs to know nothing of it).
  void note_compiled(const variants::Params& params);
  bool compiled(const variants::Params& params) const;
  void set_only_compiled(bool on) { only_compiled_ = on; }
  bool only_compiled() const { return only_compiled_; }

 private:
  variants::Space space_;
  std::mt19937_64 rng_;
  std::unordered_set<std::uint64_t> seen_;
  std::unordered_set<std::string> compiled_;   // canonical compile parts
  std::vector<variants::Params> of_compiled_;  // every variant of those programs
  bool only_compiled_ = false;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  // The next variants to evaluate (one, or a batch the driver evaluates in order); empty when done.
  virtual std::vector<Proposal> propose(SearchSpace& space) = 0;
  virtual void observe(const Observation& observation) = 0;
};

const std::vector<std::string>& strategy_names();
// UsageError naming the strategies for a name that is not one of them.
void check_strategy_name(std::string_view name);
// A strategy for `space` (which must outlive it). UsageError for unknown names.
std::unique_ptr<Strategy> make_strategy(std::string_view name, const variants::Space& space);

}  // namespace varex::tuner
