#include "tuner/value_model.hpp"

#include <unordered_set>

#include <algorithm>
#include <cmath>

namespace varex::tuner {

Indices indices_of(const variants::Space& space, const variants::Params& params) {
  Indices out;
  for (const auto& t : space.tunables()) out.push_back(t.index_of(params.at(t.name)).value_or(0));
  return out;
}

std::optional<variants::Params> unseen_point(const SearchSpace& space, const Indices& indices) {
  const auto& tunables = space.space().tunables();
  variants::Params p;
  for (std::size_t t = 0; t < tunables.size(); ++t) p[tunables[t].name] = tunables[t].values[indices[t]];
  // Canonical first: a replayed space holds only the canonical forms of its variants.
  p = space.space().canonical(p);
  if (!space.space().valid(p) || space.seen(p)) return std::nullopt;
  return p;
}

bool ordinal(const variants::Tunable& tunable) {
  for (std::size_t v = 0; v < tunable.values.size(); ++v) {
    if (!std::holds_alternative<std::int64_t>(tunable.values[v])) return false;
    if (v > 0 && std::get<std::int64_t>(tunable.values[v]) <= std::get<std::int64_t>(tunable.values[v - 1]))
      return false;
  }
  return true;
}

ValueModel::ValueModel(const variants::Space& space) : space_(space) {
  for (const auto& t : space.tunables()) arms_.emplace_back(t.values.size());
}

void ValueModel::observe(const Observation& observation) {
  observed_.push_back(observation);
  dirty_ = true;
}

const Observation* ValueModel::best() const {
  const Observation* best = nullptr;
  for (const Observation& o : observed_) {
    if (o.ok && (!best || o.value < best->value)) best = &o;
  }
  return best;
}

const ArmStats& ValueModel::arm(std::size_t t, std::size_t v) const {
  refresh();
  return arms_[t][v];
}

void ValueModel::refresh() const {
  if (!dirty_) return;
  dirty_ = false;
  const Observation* top = best();
  const double best_value = top ? top->value : 0;
  const auto& tunables = space_.tunables();
  std::vector<std::vector<double>> sum(tunables.size()), sum_sq(tunables.size()), noise(tunables.size());
  std::vector<std::vector<int>> count(tunables.size());
  for (std::size_t t = 0; t < tunables.size(); ++t) {
    sum[t].assign(tunables[t].values.size(), 0);
    sum_sq[t] = noise[t] = sum[t];
    count[t].assign(tunables[t].values.size(), 0);
  }
  for (const Observation& o : observed_) {
    const double reward = o.ok && o.value > 0 ? best_value / o.value : 0.0;
    const double uncertainty = reward * o.rel_ci;
    for (std::size_t t = 0; t < tunables.size(); ++t) {
      const auto v = tunables[t].index_of(o.params.at(tunables[t].name));
      if (!v) continue;
      sum[t][*v] += reward;
      sum_sq[t][*v] += reward * reward;
      noise[t][*v] += uncertainty * uncertainty;
      ++count[t][*v];
    }
  }
  for (std::size_t t = 0; t < tunables.size(); ++t) {
    for (std::size_t v = 0; v < tunables[t].values.size(); ++v) {
      ArmStats& a = arms_[t][v];
      a.n = count[t][v];
      a.mean = a.n ? sum[t][v] / a.n : 0;
      a.variance = a.n ? std::max(0.0, sum_sq[t][v] / a.n - a.mean * a.mean) : 0;
      a.noise = a.n ? noise[t][v] / a.n : 0;
    }
  }
}

std::vector<variants::Params> ValueModel::candidates(SearchSpace& space, std::size_t random_count) const {
  std::vector<const Observation*> ranked;
  for (const Observation& o : observed_) {
    if (o.ok) ranked.push_back(&o);
  }
  std::sort(ranked.begin(), ranked.end(),
            [](const Observation* a, const Observation* b) { return a->value < b->value; });
  std::vector<variants::Params> pool;
  for (std::size_t i = 0; i < ranked.size() && i < 3; ++i) {
    for (auto& n : space.unseen_neighbours(ranked[i]->params)) pool.push_back(std::move(n));
  }
  for (std::size_t i = 0; i < random_count; ++i) {
    auto p = space.random_unseen();
    if (!p) break;
    pool.push_back(std::move(*p));
  }
  return pool;
}

std::optional<variants::Params> ValueModel::choose(
    SearchSpace& space, std::size_t random_count,
    const std::function<double(std::size_t, std::size_t)>& score) const {
  auto best = choose_best(space, random_count, score, 1);
  if (best.empty()) return std::nullopt;
  return std::move(best.front());
}

std::vector<variants::Params> ValueModel::choose_best(
    SearchSpace& space, std::size_t random_count,
    const std::function<double(std::size_t, std::size_t)>& score, std::size_t count) const {
  const auto& tunables = space_.tunables();
  std::vector<std::pair<double, variants::Params>> scored;
  std::unordered_set<std::uint64_t> distinct;
  for (auto& p : candidates(space, random_count)) {
    if (!distinct.insert(space_.index_of(p)).second) continue;  // neighbours of two bests coincide
    double total = 0;
    for (std::size_t t = 0; t < tunables.size(); ++t)
      total += score(t, *tunables[t].index_of(p.at(tunables[t].name)));
    scored.emplace_back(total, std::move(p));
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<variants::Params> best;
  for (std::size_t i = 0; i < scored.size() && i < count; ++i) best.push_back(std::move(scored[i].second));
  return best;
}

}  // namespace varex::tuner
