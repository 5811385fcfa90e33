// Thompson sampling over tunable values: each value's mean reward has a normal posterior whose width
// comes from the rewards' variance, the measurements' uncertainty and how often the value was tried; one
// draw per value, and the candidate with the highest drawn sum is measured.
#include <cmath>

#include "tuner/strategies/strategies.hpp"
#include "tuner/value_model.hpp"

namespace varex::tuner {

namespace {

class Thompson final : public Strategy {
 public:
  explicit Thompson(const variants::Space& space) : model_(space) {
    for (const auto& t : space.tunables()) draws_.emplace_back(t.values.size());
  }

  std::vector<Proposal> propose(SearchSpace& space) override {
    // One posterior draw per value for this decision.
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t t = 0; t < draws_.size(); ++t) {
      for (std::size_t v = 0; v < draws_[t].size(); ++v) {
        const ArmStats& a = model_.arm(t, v);
        const double mean = (a.mean * a.n + 0.5) / (a.n + 1);
        const double sd = std::sqrt((a.variance + a.noise + 0.25) / (a.n + 1));
        draws_[t][v] = mean + sd * normal(space.rng());
      }
    }
    auto p = model_.choose(space, 16, [this](std::size_t t, std::size_t v) { return draws_[t][v]; });
    if (!p) p = space.random_unseen();
    if (!p) return {};
    return {{std::move(*p), 0}};
  }
  void observe(const Observation& o) override { model_.observe(o); }

 private:
  ValueModel model_;
  std::vector<std::vector<double>> draws_;
};

}  // namespace

std::unique_ptr<Strategy> make_thompson(const variants::Space& space) {
  return std::make_unique<Thompson>(space);
}

}  // namespace varex::tuner
