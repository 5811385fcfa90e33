// The default: OpenTuner's AUC bandit sharing the budget between strategies that are each strong on some
// kind of space (docs/RESULTS.md, "Search for large spaces"), so that no single space's shape decides
// the outcome.
#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

std::unique_ptr<Strategy> make_ensemble(const variants::Space& space) {
  return make_auc_bandit_over(space, {make_ucb1, make_tpe, make_genetic});
}

}  // namespace varex::tuner
