// A genetic algorithm over the tunables' value indices: a first generation of random variants, then
// generations whose children take each tunable's value from one of two parents (uniform crossover) chosen by
// tournament among the fastest variants measured so far (by any strategy: in an ensemble it breeds from
// everyone's finds), and mutate a tunable now and then (to a neighbouring value of an ordinal tunable, else
// to any). Crossover keeps combinations that work together, which the per-value bandits cannot see.
// A generation is one batch, so the live tuner compiles its programs in the background.
#include <algorithm>

#include "tuner/strategies/strategies.hpp"
#include "tuner/value_model.hpp"

namespace varex::tuner {

namespace {

class Genetic final : public Strategy {
 public:
  explicit Genetic(const variants::Space& space) : space_(space) {
    for (const auto& t : space.tunables()) ordinal_.push_back(ordinal(t));
  }

  std::vector<Proposal> propose(SearchSpace& space) override {
    std::vector<Proposal> generation;
    const std::vector<const Parent*> elite = elite_parents();
    for (std::size_t child = 0; child < kGeneration; ++child) {
      std::optional<variants::Params> p;
      for (int attempt = 0; attempt < kAttempts && !p && elite.size() >= 2; ++attempt)
        p = unseen_point(space, breed(space, elite, attempt));
      if (!p) p = space.random_unseen();
      if (!p) break;
      space.mark(*p);  // distinct within the generation
      generation.push_back({std::move(*p), 0});
    }
    return generation;
  }

  void observe(const Observation& o) override {
    if (o.fidelity != 0 || !o.ok) return;  // failures never breed; the space remembers they were seen
    parents_.push_back({indices_of(space_, o.params), o.value});
  }

 private:
  struct Parent {
    Indices indices;
    double value;
  };

  // The fastest variants measured so far: the pool parents are drawn from.
  std::vector<const Parent*> elite_parents() const {
    std::vector<const Parent*> ranked;
    for (const Parent& p : parents_) ranked.push_back(&p);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Parent* a, const Parent* b) { return a->value < b->value; });
    if (ranked.size() > kElite) ranked.resize(kElite);
    return ranked;
  }

  // Tournament of two: the faster of two random members of the elite (the elite is sorted).
  const Parent& select(SearchSpace& space, const std::vector<const Parent*>& elite) const {
    std::uniform_int_distribution<std::size_t> pick(0, elite.size() - 1);
    return *elite[std::min(pick(space.rng()), pick(space.rng()))];
  }

  // A child; later attempts (its first tries were invalid or measured before) mutate more.
  Indices breed(SearchSpace& space, const std::vector<const Parent*>& elite, int attempt) const {
    const Parent& a = select(space, elite);
    const Parent& b = select(space, elite);
    const auto& tunables = space_.tunables();
    Indices child(tunables.size());
    const double mutation = static_cast<double>(1 + attempt) / static_cast<double>(tunables.size());
    for (std::size_t t = 0; t < tunables.size(); ++t) {
      child[t] = space.uniform() < 0.5 ? a.indices[t] : b.indices[t];
      if (space.uniform() >= mutation) continue;
      const std::size_t k = tunables[t].values.size();
      if (ordinal_[t] && k > 1 && space.uniform() < 0.7) {
        // A step to a neighbouring value, where similar values perform alike.
        child[t] = child[t] == 0       ? 1
                   : child[t] + 1 == k ? k - 2
                                       : child[t] + (space.uniform() < 0.5 ? 1 : -1);
      } else {
        child[t] = std::uniform_int_distribution<std::size_t>(0, k - 1)(space.rng());
      }
    }
    return child;
  }

  static constexpr std::size_t kGeneration = 12;
  static constexpr std::size_t kElite = 12;
  static constexpr int kAttempts = 16;
  const variants::Space& space_;
  std::vector<bool> ordinal_;
  std::vector<Parent> parents_;
};

}  // namespace

std::unique_ptr<Strategy> make_genetic(const variants::Space& space) {
  return std::make_unique<Genetic>(space);
}

}  // namespace varex::tuner
