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

struct Observation {
  variants::Params params;
  Fidelity fidelity = 0;
  bool ok = false;  // verified and timed; failed and wrong variants are observed with ok = false
  double time_ms = std::numeric_limits<double>::infinity();  // median kernel time
  double rel_ci = 0;  // half-width of the median's confidence interval relative to the median
  double cost_s = 0;
  bool cut_off = false;  // timed once only, far slower than the incumbent: time_ms is that one repetition
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

 private:
  variants::Space space_;
  std::mt19937_64 rng_;
  std::unordered_set<std::uint64_t> seen_;
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
