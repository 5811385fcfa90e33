// OpenTuner's AUC bandit as a meta-strategy: each step one sub-strategy proposes, chosen by the area under
// the curve of its recent "found a new best" events (recent successes weigh more) plus an exploration
// bonus. Every sub-strategy observes every measurement, so each learns from all of them.
#include <cmath>
#include <deque>

#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

namespace {

class AucBandit final : public Strategy {
 public:
  AucBandit(const variants::Space& space, const std::vector<StrategyFactory>& factories) {
    for (auto factory : factories) {
      arms_.emplace_back();
      arms_.back().strategy = factory(space);
    }
  }

  std::vector<Proposal> propose(SearchSpace& space) override {
    ++steps_;
    std::size_t choice = 0;
    double best_score = -1;
    for (std::size_t i = 0; i < arms_.size(); ++i) {
      const Arm& a = arms_[i];
      const double score =
          a.uses == 0
              ? 1e9
              : auc(a.events) + kExploration * std::sqrt(2 * std::log(static_cast<double>(steps_)) / a.uses);
      if (score > best_score) {
        best_score = score;
        choice = i;
      }
    }
    // A sub-strategy with nothing left falls through to the next.
    for (std::size_t k = 0; k < arms_.size(); ++k) {
      const std::size_t i = (choice + k) % arms_.size();
      auto proposals = arms_[i].strategy->propose(space);
      if (!proposals.empty()) {
        last_ = i;
        ++arms_[i].uses;
        return proposals;
      }
    }
    return {};
  }

  void observe(const Observation& o) override {
    const bool improved = o.ok && o.time_ms < best_;
    if (improved) best_ = o.time_ms;
    auto& events = arms_[last_].events;
    events.push_back(improved);
    if (events.size() > kWindow) events.pop_front();
    for (Arm& a : arms_) a.strategy->observe(o);
  }

 private:
  struct Arm {
    std::unique_ptr<Strategy> strategy;
    std::deque<bool> events;
    std::size_t uses = 0;
  };

  // Area under the curve of successes over the window, weighting the newest events most, in [0, 1].
  static double auc(const std::deque<bool>& events) {
    double area = 0, total = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
      area += events[i] ? static_cast<double>(i + 1) : 0;
      total += static_cast<double>(i + 1);
    }
    return total > 0 ? area / total : 0;
  }

  static constexpr std::size_t kWindow = 50;
  static constexpr double kExploration = 0.2;
  std::vector<Arm> arms_;
  std::size_t last_ = 0;
  std::size_t steps_ = 0;
  double best_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Strategy> make_auc_bandit_over(const variants::Space& space,
                                               const std::vector<StrategyFactory>& arms) {
  return std::make_unique<AucBandit>(space, arms);
}

std::unique_ptr<Strategy> make_auc_bandit(const variants::Space& space) {
  return make_auc_bandit_over(space, {make_random, make_egreedy, make_ucb1, make_thompson});
}

}  // namespace varex::tuner
