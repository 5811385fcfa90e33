#pragma once
// What the model-based strategies (egreedy, ucb1, thompson) learn: for every value of every tunable, the
// rewards of the variants measured with it. A variant's reward is the best value / its value (the objective,
// time by default), so the best so far scores 1 and failures 0. Candidates are scored additively over their
// values (a linear bandit on one-hot features), which generalises from a few hundred measurements to spaces
// of any size.
#include <functional>
#include <optional>
#include <vector>

#include "tuner/strategy.hpp"

namespace varex::tuner {

struct ArmStats {
  int n = 0;
  double mean = 0;
  double variance = 0;  // of the rewards
  double noise = 0;     // mean squared measurement uncertainty of the rewards
};

// Points as one value index per tunable (in the space's order), for strategies that recombine values (ga)
// or model each tunable's values (tpe).
using Indices = std::vector<std::size_t>;
Indices indices_of(const variants::Space& space, const variants::Params& params);
// The canonical form of the point with these value indices, when it is valid and was not proposed before.
std::optional<variants::Params> unseen_point(const SearchSpace& space, const Indices& indices);
// Whether a tunable's values are integers listed in ascending order, so that neighbouring indices are
// similar values (an ordinal tunable: ept, local) rather than unrelated words (kernel=overflow,scan).
bool ordinal(const variants::Tunable& tunable);

class ValueModel {
 public:
  explicit ValueModel(const variants::Space& space);

  void observe(const Observation& observation);
  std::size_t observations() const { return observed_.size(); }
  const Observation* best() const;

  // Statistics of tunable `t`'s value `v` (indices into the space's tunables and their values).
  const ArmStats& arm(std::size_t t, std::size_t v) const;

  // The pool a model-based strategy chooses from: unseen valid neighbours of the best few variants and
  // some random unseen points.
  std::vector<variants::Params> candidates(SearchSpace& space, std::size_t random_count) const;

  // The candidate with the highest score, where a point's score is the sum of score(t, v) over its values.
  std::optional<variants::Params> choose(SearchSpace& space, std::size_t random_count,
                                         const std::function<double(std::size_t, std::size_t)>& score) const;
  // The `count` highest-scoring distinct candidates, best first: a batch whose programs the live tuner
  // compiles in the background while it measures the first.
  std::vector<variants::Params> choose_best(SearchSpace& space, std::size_t random_count,
                                            const std::function<double(std::size_t, std::size_t)>& score,
                                            std::size_t count) const;

 private:
  void refresh() const;

  const variants::Space& space_;
  std::vector<Observation> observed_;
  mutable bool dirty_ = false;
  mutable std::vector<std::vector<ArmStats>> arms_;
};

}  // namespace varex::tuner
