// OpenTuner's AUC bandit as a meta-strategy: each step one sub-strategy proposes, chosen by the area under
// the curve of its recent "found a new best" events (recent successes weigh more) plus an exploration
// bonus over the evaluations it was given (not its turns: an arm proposing batches would otherwise take
// most of the budget).
// What the arms learn from (Learning): every measurement, as OpenTuner's arms do, or, for a portfolio of
// independent searches, the first arm every measurement (the other arms' finds, the default and the
// warm-start points the driver measures first: a model of the tunables' values gains from all data) and the
// others only their own proposals (a population bred from everyone's finds converges on the region the
// model favours; docs/RESULTS.md, "Search for large spaces").
#include <cmath>
#include <deque>
#include <unordered_map>

#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

namespace {

class AucBandit final : public Strategy {
 public:
  AucBandit(const variants::Space& space, const std::vector<StrategyFactory>& factories, ArmLearning learning)
      : space_(space), learning_(learning) {
    for (auto factory : factories) {
      arms_.emplace_back();
      arms_.back().strategy = factory(space);
    }
  }

  std::vector<Proposal> propose(SearchSpace& space) override {
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
        for (const Proposal& p : proposals) proposer_[space_.index_of(p.params)] = i;
        arms_[i].uses += proposals.size();
        steps_ += proposals.size();
        return proposals;
      }
    }
    return {};
  }

  void observe(const Observation& o) override {
    const bool improved = o.ok && o.value < best_;
    if (improved) best_ = o.value;
    const auto proposer = proposer_.find(space_.index_of(o.params));
    Arm* arm = nullptr;  // none: measured by the driver (the default, warm-start points)
    if (proposer != proposer_.end()) {
      arm = &arms_[proposer->second];
      proposer_.erase(proposer);
      arm->events.push_back(improved);
      if (arm->events.size() > kWindow) arm->events.pop_front();
    }
    for (Arm& a : arms_) {
      if (learning_ == ArmLearning::Everything || &a == arm || &a == &arms_.front()) a.strategy->observe(o);
    }
  }

 private:
  struct Arm {
    std::unique_ptr<Strategy> strategy;
    std::deque<bool> events;
    std::size_t uses = 0;  // evaluations proposed
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
  const variants::Space& space_;
  const ArmLearning learning_;
  std::vector<Arm> arms_;
  std::unordered_map<std::uint64_t, std::size_t> proposer_;  // proposed, not yet observed: by whom
  std::size_t steps_ = 0;                                    // evaluations proposed by all arms
  double best_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Strategy> make_auc_bandit_over(const variants::Space& space,
                                               const std::vector<StrategyFactory>& arms,
                                               ArmLearning learning) {
  return std::make_unique<AucBandit>(space, arms, learning);
}

std::unique_ptr<Strategy> make_auc_bandit(const variants::Space& space) {
  return make_auc_bandit_over(space, {make_random, make_egreedy, make_ucb1, make_thompson},
                              ArmLearning::Everything);
}

}  // namespace varex::tuner
