// A first-improvement local search with random restarts: the runtime's online adaptation (docs/RUNTIME.md)
// runs it over an application's calls, and the tuner runs it like any other strategy. The climb starts from
// the best variant observed (the default, what a warm start or a profile measured first) and tries its
// neighbours one value of each tunable before a second value of any, so that a few evaluations already
// move every knob; the first neighbour that beats the climb's point becomes the point, and its neighbours
// are tried next. Where no neighbour is better (a local optimum), the climb restarts from a random variant.
// Where the calls are costly, a neighbourhood is cheap to walk: one tunable changes, and launch-time
// tunables keep the compiled program. One proposal at a time: the climb moves as soon as a neighbour beats
// its point (the runtime evaluates a candidate over several calls, and a batch would delay the move).
#include <deque>
#include <limits>
#include <map>

#include "tuner/strategies/strategies.hpp"

namespace varex::tuner {

namespace {

// `around`'s neighbours in an order that spreads over the tunables: one value of each tunable first, then a
// second of each, … (the space lists them tunable by tunable).
std::vector<variants::Params> spread(const variants::Space& space, const variants::Params& around,
                                     std::vector<variants::Params> neighbours) {
  std::vector<std::pair<std::size_t, std::size_t>> rank;  // (rank within its tunable, tunable)
  std::map<std::size_t, std::size_t> per_tunable;
  for (const variants::Params& n : neighbours) {
    std::size_t changed = 0;
    for (std::size_t t = 0; t < space.tunables().size(); ++t) {
      const std::string& name = space.tunables()[t].name;
      if (n.at(name) != around.at(name)) {
        changed = t;
        break;
      }
    }
    rank.emplace_back(per_tunable[changed]++, changed);
  }
  std::vector<std::size_t> order(neighbours.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank[a] < rank[b]; });
  std::vector<variants::Params> out;
  for (const std::size_t i : order) out.push_back(std::move(neighbours[i]));
  return out;
}

class LocalSearch final : public Strategy {
 public:
  explicit LocalSearch(const variants::Space& space) : space_(space) {}

  std::vector<Proposal> propose(SearchSpace& space) override {
    if (moved_) {  // the climb moved: its new point's neighbours replace the old point's
      moved_ = false;
      queue_.clear();
      for (variants::Params& n : spread(space_, point_, space.unseen_neighbours(point_)))
        queue_.push_back(std::move(n));
    }
    while (!queue_.empty()) {
      variants::Params p = std::move(queue_.front());
      queue_.pop_front();
      if (!space.seen(p) && (!space.only_compiled() || space.compiled(p))) return {{std::move(p), 0}};
    }
    // A local optimum (or nothing observed yet): a restart, whose point the climb takes when it is observed.
    point_value_ = std::numeric_limits<double>::infinity();
    std::optional<variants::Params> start;
    const variants::Params defaults = space_.canonical(space_.defaults());
    if (space_.valid(defaults) && !space.seen(defaults)) start = defaults;
    if (!start) start = space.random_unseen();
    if (!start) return {};
    return {{std::move(*start), 0}};
  }

  void observe(const Observation& o) override {
    if (!o.ok || o.cut_off || o.fidelity != 0 || !(o.value < point_value_)) return;
    point_ = space_.canonical(o.params);
    point_value_ = o.value;
    moved_ = true;
  }

 private:
  const variants::Space& space_;
  variants::Params point_;
  double point_value_ = std::numeric_limits<double>::infinity();
  bool moved_ = false;
  std::deque<variants::Params> queue_;  // the point's neighbours not yet proposed
};

}  // namespace

std::unique_ptr<Strategy> make_local(const variants::Space& space) {
  return std::make_unique<LocalSearch>(space);
}

}  // namespace varex::tuner
