#pragma once
// One factory per strategy; tuner/strategies/registry.cpp lists them by name.
#include <memory>
#include <vector>

#include "tuner/strategy.hpp"

namespace varex::tuner {

std::unique_ptr<Strategy> make_exhaustive(const variants::Space& space);
std::unique_ptr<Strategy> make_random(const variants::Space& space);
std::unique_ptr<Strategy> make_egreedy(const variants::Space& space);
std::unique_ptr<Strategy> make_ucb1(const variants::Space& space);
std::unique_ptr<Strategy> make_thompson(const variants::Space& space);
std::unique_ptr<Strategy> make_halving(const variants::Space& space);
std::unique_ptr<Strategy> make_auc_bandit(const variants::Space& space);
std::unique_ptr<Strategy> make_tpe(const variants::Space& space);
std::unique_ptr<Strategy> make_genetic(const variants::Space& space);
std::unique_ptr<Strategy> make_ensemble(const variants::Space& space);
std::unique_ptr<Strategy> make_local(const variants::Space& space);

// OpenTuner's AUC bandit over any sub-strategies (tuner/strategies/auc_bandit.cpp): auc_bandit and ensemble
// differ only in what they share the budget between.
using StrategyFactory = std::unique_ptr<Strategy> (*)(const variants::Space&);
// Every arm learns from every measurement, or the first arm from all and the others from their own.
enum class ArmLearning { Everything, FirstArmEverythingOthersOwn };
std::unique_ptr<Strategy> make_auc_bandit_over(const variants::Space& space,
                                               const std::vector<StrategyFactory>& arms,
                                               ArmLearning learning);

}  // namespace varex::tuner
