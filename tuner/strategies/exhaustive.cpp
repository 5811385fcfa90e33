// Every valid variant (canonical point) once, in index order (compile-time tunables lead, so variants that
// share a program come together). The baseline every other strategy is judged against.
#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

namespace {

class Exhaustive final : public Strategy {
 public:
  std::vector<Proposal> propose(SearchSpace& space) override {
    std::vector<Proposal> batch;
    // A batch lets the driver compile the next programs while the first is measured.
    const variants::Space& s = space.space();
    while (batch.size() < 16 && next_ < s.cardinality()) {
      variants::Params p = s.at(next_);
      const std::uint64_t here = next_;
      next_ = s.next_index(here, p);  // past a part no canonical point is in, where the space says so
      if (next_ == here + 1 && s.valid(p) && s.is_canonical(p) && !space.seen(p))
        batch.push_back({std::move(p), 0});
    }
    return batch;
  }
  void observe(const Observation&) override {}

 private:
  std::uint64_t next_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive(const variants::Space&) {
  return std::make_unique<Exhaustive>();
}

}  // namespace varex::tuner
