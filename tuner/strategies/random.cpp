// Uniformly random valid variants without repetition: the yardstick of the strategy benchmark.
#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

namespace {

class RandomSearch final : public Strategy {
 public:
  std::vector<Proposal> propose(SearchSpace& space) override {
    auto p = space.random_unseen();
    if (!p) return {};
    return {{std::move(*p), 0}};
  }
  void observe(const Observation&) override {}
};

}  // namespace

std::unique_ptr<Strategy> make_random(const variants::Space&) {
  return std::make_unique<RandomSearch>();
}

}  // namespace varex::tuner
