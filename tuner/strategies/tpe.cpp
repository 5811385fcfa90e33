// A tree-structured Parzen estimator (Bergstra et al. 2011, as Optuna and hyperopt use it) over the tunables'
// values: the measured variants are split into the good ones (the fastest tenth, at most 25) and the rest
// (failures among them), each tunable gets a value density for either group (counts smoothed by a uniform
// prior, and onto the neighbouring values of an ordinal tunable), and of candidates drawn from the good
// densities the one with the highest ratio good/rest is measured. The densities see one tunable at a time;
// drawing from the good group's values keeps combinations of good values together in practice.
#include <algorithm>
#include <cmath>

#include "tuner/strategies/strategies.hpp"
#include "tuner/value_model.hpp"

namespace varex::tuner {

namespace {

class Tpe final : public Strategy {
 public:
  explicit Tpe(const variants::Space& space) : space_(space) {
    for (const auto& t : space.tunables()) ordinal_.push_back(ordinal(t));
  }

  std::vector<Proposal> propose(SearchSpace& space) override {
    std::optional<variants::Params> p;
    if (ok_count() >= kStartup) p = suggest(space);
    if (!p) p = space.random_unseen();
    if (!p) return {};
    return {{std::move(*p), 0}};
  }

  void observe(const Observation& o) override {
    if (o.fidelity != 0) return;  // cheap looks are too noisy to rank by
    observed_.push_back({indices_of(space_, o.params), o.ok ? o.value : kFailed});
  }

 private:
  struct Point {
    Indices indices;
    double value;
  };
  using Densities = std::vector<std::vector<double>>;  // [tunable][value], each row sums to 1

  std::size_t ok_count() const {
    return static_cast<std::size_t>(
        std::count_if(observed_.begin(), observed_.end(), [](const Point& p) { return p.value < kFailed; }));
  }

  Densities densities(const std::vector<const Point*>& group) const {
    const auto& tunables = space_.tunables();
    Densities d(tunables.size());
    for (std::size_t t = 0; t < tunables.size(); ++t) {
      const std::size_t k = tunables[t].values.size();
      d[t].assign(k, kPrior / static_cast<double>(k));
      for (const Point* p : group) {
        const std::size_t v = p->indices[t];
        d[t][v] += 1;
        if (ordinal_[t]) {
          if (v > 0) d[t][v - 1] += kNeighbour;
          if (v + 1 < k) d[t][v + 1] += kNeighbour;
        }
      }
      double total = 0;
      for (double w : d[t]) total += w;
      for (double& w : d[t]) w /= total;
    }
    return d;
  }

  std::optional<variants::Params> suggest(SearchSpace& space) const {
    std::vector<const Point*> ranked;
    for (const Point& p : observed_) ranked.push_back(&p);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Point* a, const Point* b) { return a->value < b->value; });
    const std::size_t good_count = std::min<std::size_t>(
        kMaxGood, static_cast<std::size_t>(std::ceil(0.1 * static_cast<double>(ok_count()))));
    const std::vector<const Point*> good(ranked.begin(),
                                         ranked.begin() + static_cast<std::ptrdiff_t>(good_count));
    const std::vector<const Point*> rest(ranked.begin() + static_cast<std::ptrdiff_t>(good_count),
                                         ranked.end());
    const Densities l = densities(good), g = densities(rest);
    std::optional<variants::Params> best;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int c = 0; c < kCandidates; ++c) {
      Indices x(l.size());
      for (std::size_t t = 0; t < l.size(); ++t) {
        std::discrete_distribution<std::size_t> draw(l[t].begin(), l[t].end());
        x[t] = draw(space.rng());
      }
      auto p = unseen_point(space, x);
      if (!p) continue;
      double score = 0;
      const Indices canonical = indices_of(space_, *p);
      for (std::size_t t = 0; t < l.size(); ++t) score += std::log(l[t][canonical[t]] / g[t][canonical[t]]);
      if (score > best_score) {
        best_score = score;
        best = std::move(p);
      }
    }
    return best;
  }

  static constexpr double kFailed = std::numeric_limits<double>::infinity();
  static constexpr std::size_t kStartup = 10;  // random variants before the densities mean anything
  static constexpr std::size_t kMaxGood = 25;
  static constexpr int kCandidates = 32;
  static constexpr double kPrior = 1.0;       // weight of the uniform prior in each density
  static constexpr double kNeighbour = 0.25;  // what a value lends its neighbours on an ordinal tunable
  const variants::Space& space_;
  std::vector<bool> ordinal_;
  std::vector<Point> observed_;
};

}  // namespace

std::unique_ptr<Strategy> make_tpe(const variants::Space& space) {
  return std::make_unique<Tpe>(space);
}

}  // namespace varex::tuner
