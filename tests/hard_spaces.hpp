#pragma once
// Recorded sweeps made up for the strategy work: spaces of different shapes whose time models have the
// structure real large spaces show and the selection fixture (synthetic_sweep.hpp) lacks: tunables that
// only matter together (pairwise interactions), a constraint, few good variants, failing regions (resource
// limits) and a few wrong variants faster than everything. Each is generated from a seed, so tests and the
// measurements in docs/RESULTS.md see the same space. Not a substitute for sweeps recorded on devices, but
// a check that a strategy does not just suit one space.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/hash.hpp"
#include "results/store.hpp"
#include "variants/space.hpp"

namespace varex::test {

struct HardShape {
  std::string name;
  std::vector<std::size_t> values;  // value count per tunable
  std::size_t ordinal = 0;          // the first `ordinal` tunables are integers (the rest words)
  std::size_t compile = 0;          // the first `compile` tunables are compile-time
  int pairs = 0;                    // interacting pairs of tunables
  double main = 0.6;                // strength of each tunable's own effect
  double interaction = 0.8;         // strength of a pair's effect
  double needle = 0;                // >0: the best combination of three tunables is this much faster
  double fail = 0.03;               // share of the space in a failing region (a resource limit)
  std::uint32_t seed = 1;
};

struct HardSpace {
  variants::Space space;
  std::vector<results::RecordedMeasurement> recorded;
};

// The shapes docs/RESULTS.md measures ("Search for large spaces"): many tunables with few values, few with
// many, a large one, one where random search is strong, and a needle of a few good variants.
inline std::vector<HardShape> hard_shapes() {
  return {
      {"many-few", {2, 2, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2}, 6, 4, 14, 0.15, 0.8, 0, 0.03, 11},
      {"few-many", {24, 24, 16}, 3, 1, 3, 0.3, 1.2, 0, 0.05, 12},
      {"large", {4, 4, 4, 4, 4, 3, 3, 3}, 6, 3, 10, 0.3, 0.9, 0.3, 0.04, 13},
      {"flat", {4, 4, 4, 4, 3, 3}, 4, 2, 2, 0.04, 0.03, 0, 0.02, 14},
      {"needle", {4, 4, 4, 4, 3, 3, 3}, 5, 3, 6, 0.3, 0.7, 0.5, 0.03, 15},
  };
}

inline HardSpace make_hard_space(const HardShape& shape) {
  std::mt19937 rng(shape.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::size_t n = shape.values.size();
  std::vector<variants::Tunable> tunables;
  for (std::size_t t = 0; t < n; ++t) {
    variants::Tunable tunable;
    tunable.name = "t" + std::to_string(t);
    tunable.kind = t < shape.compile ? variants::TunableKind::Compile : variants::TunableKind::Launch;
    // Integers 1, 2, 4, … for an ordinal tunable, words for the others.
    static const std::vector<variants::Value> words{variants::Value{"w0"}, variants::Value{"w1"},
                                                    variants::Value{"w2"}, variants::Value{"w3"},
                                                    variants::Value{"w4"}, variants::Value{"w5"}};
    for (std::size_t v = 0; v < shape.values[t]; ++v) {
      // Built in place: g++ 12 at -O3 takes the moved temporary's string member for uninitialized
      // (-Wmaybe-uninitialized, an error with -DVAREX_WERROR=ON).
      if (t < shape.ordinal)
        tunable.values.emplace_back(std::in_place_type<std::int64_t>, std::int64_t{1} << v);
      else
        tunable.values.push_back(words.at(v));
    }
    tunable.default_value = tunable.values.front();
    tunables.push_back(std::move(tunable));
  }
  // Each tunable's own effect: a bowl around a random best value (ordinal) or a random factor per word.
  std::vector<std::vector<double>> main(n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t k = shape.values[t];
    const double best = unit(rng) * static_cast<double>(k - 1);
    for (std::size_t v = 0; v < k; ++v) {
      const double d = (static_cast<double>(v) - best) / static_cast<double>(k);
      main[t].push_back(t < shape.ordinal ? 1 + shape.main * 4 * d * d : 1 + shape.main * unit(rng));
    }
  }
  // Pairs that only matter together: a random factor per combination of their values.
  struct Pair {
    std::size_t a, b;
    std::vector<double> factor;
  };
  std::vector<Pair> pairs;
  for (int i = 0; i < shape.pairs && n >= 2; ++i) {
    Pair p{rng() % n, rng() % n, {}};
    if (p.a == p.b) p.b = (p.a + 1) % n;
    for (std::size_t c = 0; c < shape.values[p.a] * shape.values[p.b]; ++c)
      p.factor.push_back(1 + shape.interaction * unit(rng) * unit(rng));
    pairs.push_back(std::move(p));
  }
  // A needle: one combination of three tunables' values is much faster than any other.
  std::vector<std::size_t> needle;
  for (std::size_t i = 0; i < 3 && shape.needle > 0; ++i) needle.push_back(rng() % shape.values[i]);

  auto index = [&](const variants::Params& p, std::size_t t) {
    return *tunables[t].index_of(p.at(tunables[t].name));
  };
  // A constraint, as operators have (a work-group limit): the first two ordinal tunables' product is bounded.
  std::vector<variants::Constraint> constraints;
  if (shape.ordinal >= 2) {
    const std::size_t limit = (shape.values[0] - 1) + (shape.values[1] - 1) - 1;
    constraints.push_back({"t0 * t1 within the limit", [limit, tunables](const variants::Params& p) {
                             return *tunables[0].index_of(p.at("t0")) + *tunables[1].index_of(p.at("t1")) <=
                                    limit;
                           }});
  }
  variants::Space space("hard-" + shape.name, tunables, constraints);

  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<results::RecordedMeasurement> recorded;
  std::set<std::string> compiled;
  std::int64_t id = 0;
  for (const auto& p : space.enumerate()) {
    double t = 1.0;
    for (std::size_t i = 0; i < n; ++i) t *= main[i][index(p, i)];
    for (const Pair& pair : pairs)
      t *= pair.factor[index(p, pair.a) * shape.values[pair.b] + index(p, pair.b)];
    if (!needle.empty()) {
      bool hit = true;
      for (std::size_t i = 0; i < needle.size(); ++i) hit = hit && index(p, i) == needle[i];
      if (!hit) t *= 1 + shape.needle;
    }
    const auto h = fnv1a(variants::canonical(p) + std::to_string(shape.seed));
    t *= 0.99 + 0.02 * static_cast<double>(h % 1000) / 1000.0;  // a variant's own +-1%
    results::RecordedMeasurement r;
    r.id = ++id;
    r.params = p;
    r.variant_id = hex64(h);
    r.purpose = "search";
    varex::Measurement& m = r.m;
    // A failing region where the last two tunables both take high values (a resource limit), and a few
    // variants that are wrong and fast.
    const double high = static_cast<double>(index(p, n - 1) + 1) / static_cast<double>(shape.values[n - 1]) *
                        static_cast<double>(index(p, n - 2) + 1) / static_cast<double>(shape.values[n - 2]);
    if (high > 1 - shape.fail * 4) {
      m.status = varex::Status::LaunchError;
      m.error = "out of resources";
    } else if (h % 211 == 7) {
      m.status = varex::Status::WrongResult;
      m.samples_ms = {0.1 * t};
    } else {
      m.verified = true;
      for (int i = 0; i < 5; ++i) m.samples_ms.push_back(t * (1 + noise(rng)));
    }
    m.kernel = summarize(m.samples_ms);
    m.compile_cached = !compiled.insert(variants::canonical(space.compile_part(p))).second;
    m.compile_ms = m.compile_cached ? 0 : 40;
    m.wall_ms = m.compile_ms + 2 + (m.ok() ? 7 * t : 1);
    recorded.push_back(std::move(r));
  }
  return {space, std::move(recorded)};
}

}  // namespace varex::test
