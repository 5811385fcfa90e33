#include <utility>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

namespace {

const std::vector<std::pair<std::string, StrategyFactory>>& registry() {
  static const std::vector<std::pair<std::string, StrategyFactory>> all{{"exhaustive", make_exhaustive},
                                                                        {"random", make_random},
                                                                        {"egreedy", make_egreedy},
                                                                        {"ucb1", make_ucb1},
                                                                        {"thompson", make_thompson},
                                                                        {"halving", make_halving},
                                                                        {"auc_bandit", make_auc_bandit},
                                                                        {"tpe", make_tpe},
                                                                        {"genetic", make_genetic},
                                                                        {"ensemble", make_ensemble},
                                                                        {"local", make_local}};
  return all;
}

}  // namespace

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, _] : registry()) n.push_back(name);
    return n;
  }();
  return names;
}

void check_strategy_name(std::string_view name) {
  for (const auto& [known, factory] : registry()) {
    if (known == name) return;
  }
  throw UsageError("unknown strategy '" + std::string(name) +
                   "' (strategies: " + join(strategy_names(), ", ") + ")");
}

std::unique_ptr<Strategy> make_strategy(std::string_view name, const variants::Space& space) {
  check_strategy_name(name);
  for (const auto& [known, factory] : registry()) {
    if (known == name) return factory(space);
  }
  return nullptr;  // not reached: the name was checked
}

}  // namespace varex::tuner
