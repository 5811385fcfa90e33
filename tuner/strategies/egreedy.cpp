// Epsilon-greedy over tunable values: with probability epsilon a random variant, otherwise the candidate
// whose values have the highest mean reward so far (values not yet tried count as average).
#include "tuner/strategies/strategies.hpp"
#include "tuner/value_model.hpp"

namespace varex::tuner {

namespace {

class EpsilonGreedy final : public Strategy {
 public:
  explicit EpsilonGreedy(const variants::Space& space) : model_(space) {}

  std::vector<Proposal> propose(SearchSpace& space) override {
    std::optional<variants::Params> p;
    if (model_.best() && space.uniform() >= kEpsilon) {
      p = model_.choose(space, 16, [this](std::size_t t, std::size_t v) {
        const ArmStats& a = model_.arm(t, v);
        return (a.mean * a.n + 0.5) / (a.n + 1);  // a weak prior of 0.5 keeps single lucky draws modest
      });
    }
    if (!p) p = space.random_unseen();
    if (!p) return {};
    return {{std::move(*p), 0}};
  }
  void observe(const Observation& o) override { model_.observe(o); }

 private:
  static constexpr double kEpsilon = 0.1;
  ValueModel model_;
};

}  // namespace

std::unique_ptr<Strategy> make_egreedy(const variants::Space& space) {
  return std::make_unique<EpsilonGreedy>(space);
}

}  // namespace varex::tuner
