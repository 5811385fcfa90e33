// The default until issue 49 (now halving, chosen by leave-one-out: scripts/leave_one_out.py): OpenTuner's
// AUC bandit sharing the budget between a model of the tunables' values (ucb1, strong where single values
// matter and on rugged pairwise tables) and a population (genetic, strong where combinations matter), so that
// no single space's shape decides the outcome. The model learns from every measurement, the population from
// its own (tuner/strategies/auc_bandit.cpp; docs/RESULTS.md, "Search for large spaces", for the measurements
// behind both choices).
#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

std::unique_ptr<Strategy> make_ensemble(const variants::Space& space) {
  return make_auc_bandit_over(space, {make_ucb1, make_genetic}, ArmLearning::FirstArmEverythingOthersOwn);
}

}  // namespace varex::tuner
