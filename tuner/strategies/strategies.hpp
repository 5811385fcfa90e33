#pragma once
// One factory per strategy; tuner/strategies/registry.cpp lists them by name.
#include <memory>

#include "tuner/strategy.hpp"

namespace varex::tuner {

std::unique_ptr<Strategy> make_exhaustive(const variants::Space& space);
std::unique_ptr<Strategy> make_random(const variants::Space& space);
std::unique_ptr<Strategy> make_egreedy(const variants::Space& space);
std::unique_ptr<Strategy> make_ucb1(const variants::Space& space);
std::unique_ptr<Strategy> make_thompson(const variants::Space& space);
std::unique_ptr<Strategy> make_halving(const variants::Space& space);
std::unique_ptr<Strategy> make_auc_bandit(const variants::Space& space);

}  // namespace varex::tuner
