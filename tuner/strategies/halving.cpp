// The default strategy (chosen by leave-one-out over the recorded sweeps: scripts/leave_one_out.py).
// Successive halving: a bracket of variants measured cheaply (few repetitions), the best third measured again
// more thoroughly, the best third of those with the full protocol; then a new bracket. The first bracket is
// random; later ones take half their variants from the neighbourhood of the best variants measured in full so
// far, and half at random.
#include <algorithm>
#include <array>

#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

namespace {

class Halving final : public Strategy {
 public:
  std::vector<Proposal> propose(SearchSpace& space) override {
    if (rung_ + 1 < kRungs.size() && !results_.empty()) {
      // Promote the best third of the rung just measured.
      std::sort(results_.begin(), results_.end(),
                [](const Observation& a, const Observation& b) { return a.value < b.value; });
      std::vector<Proposal> next;
      const std::size_t keep = std::max<std::size_t>(1, results_.size() / kEta);
      for (std::size_t i = 0; i < keep && results_[i].ok; ++i)
        next.push_back({results_[i].params, kRungs[rung_ + 1]});
      results_.clear();
      if (!next.empty()) {
        ++rung_;
        expected_ = next.size();
        return next;
      }
    }
    // A new bracket of fresh variants at the cheapest fidelity.
    rung_ = 0;
    results_.clear();
    std::vector<Proposal> bracket;
    std::sort(finalists_.begin(), finalists_.end(),
              [](const Observation& a, const Observation& b) { return a.value < b.value; });
    for (std::size_t f = 0; f < finalists_.size() && f < 2; ++f) {
      for (auto& n : space.unseen_neighbours(finalists_[f].params)) {
        if (bracket.size() >= kBracket / 2) break;
        if (space.seen(n)) continue;
        space.mark(n);
        bracket.push_back({std::move(n), kRungs[0]});
      }
    }
    while (bracket.size() < kBracket) {
      auto p = space.random_unseen();
      if (!p) break;
      space.mark(*p);  // distinct within the bracket
      bracket.push_back({std::move(*p), kRungs[0]});
    }
    expected_ = bracket.size();
    return bracket;
  }

  void observe(const Observation& o) override {
    if (results_.size() < expected_) results_.push_back(o);
    if (o.ok && o.fidelity == 0) finalists_.push_back(o);
  }

 private:
  static constexpr std::size_t kEta = 3;
  static constexpr std::size_t kBracket = 27;
  // Timed repetitions per rung; 0 is the session's full protocol.
  static constexpr std::array<Fidelity, 3> kRungs{2, 5, 0};
  std::size_t rung_ = 0;
  std::size_t expected_ = 0;
  std::vector<Observation> results_;
  std::vector<Observation> finalists_;  // measured with the full protocol
};

}  // namespace

std::unique_ptr<Strategy> make_halving(const variants::Space&) {
  return std::make_unique<Halving>();
}

}  // namespace varex::tuner
