#include "tuner/warm_start.hpp"

#include <algorithm>
#include <tuple>

#include "harness/operators/operator.hpp"
#include "results/export.hpp"
#include "varex/profile.hpp"

namespace varex::tuner {

namespace {

// `params` taken over into `space`: the tunables it has, with values the space offers, over its defaults.
std::optional<variants::Params> take_over(const variants::Params& params, const variants::Space& space) {
  variants::Params p = space.defaults();
  for (const variants::Tunable& t : space.tunables()) {
    const auto it = params.find(t.name);
    if (it != params.end() && std::find(t.values.begin(), t.values.end(), it->second) != t.values.end())
      p[t.name] = it->second;
  }
  p = space.canonical(p);
  if (!space.valid(p)) return std::nullopt;
  return p;
}

}  // namespace

std::vector<variants::Params> warm_start_points(const std::vector<WarmStartSource>& sources,
                                                const DeviceInfo& device,
                                                const datasets::WorkloadClass& target,
                                                const variants::Space& space, std::size_t limit) {
  using Rank = std::tuple<int, int, double, std::size_t>;
  std::vector<Rank> ranked;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const WarmStartSource& s = sources[i];
    ranked.emplace_back(s.device.model_key() == device.model_key() ? 0 : 1,
                        s.workload_class.shape == target.shape ? 0 : 1,
                        profile::workload_distance(results::profile_workload(s.workload_class),
                                                   results::profile_workload(target)),
                        i);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<variants::Params> out;
  for (const Rank& r : ranked) {
    if (out.size() >= limit) break;
    const auto p = take_over(sources[std::get<3>(r)].params, space);
    if (p && std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
  }
  return out;
}

std::vector<WarmStartSource> recorded_bests(results::Store& store, const std::string& op) {
  store.classify_workloads(harness::workload_class_of);
  std::vector<WarmStartSource> out;
  results::BestQuery query;
  query.op = op;
  query.finished_only = true;
  for (results::BestRow& row : store.best(query)) {
    out.push_back({std::move(row.device), std::move(row.workload_class), std::move(row.params)});
  }
  return out;
}

}  // namespace varex::tuner
