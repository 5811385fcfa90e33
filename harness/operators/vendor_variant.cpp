#include "harness/operators/vendor_variant.hpp"

#include <algorithm>
#include <map>

#include "harness/backends/vendor_library.hpp"

namespace varex::harness {

void add_vendor_variant(const DeviceInfo& device, const std::string& call,
                        std::vector<variants::Tunable>& tunables,
                        std::vector<variants::Constraint>& constraints,
                        const std::vector<std::string>& honoured) {
  if (!has_vendor_library(device)) return;
  std::map<std::string, variants::Value> defaults;
  for (const variants::Tunable& t : tunables) {
    if (std::find(honoured.begin(), honoured.end(), t.name) == honoured.end())
      defaults[t.name] = t.default_value;
  }
  tunables.push_back({"impl",
                      variants::TunableKind::Launch,
                      {variants::Value{"own"}, variants::Value{"cub"}},
                      variants::Value{"own"},
                      "own: varex's kernels; cub: " + call + " from " + vendor_library()->name +
                          " (built with varex by nvcc)"});
  constraints.push_back({"impl=cub takes none of the own kernels' tunables: they keep their defaults",
                         [defaults](const variants::Params& p) {
                           if (!is_vendor(p)) return true;
                           return std::all_of(defaults.begin(), defaults.end(),
                                              [&](const auto& d) { return p.at(d.first) == d.second; });
                         }});
}

bool is_vendor(const variants::Params& params) {
  const auto it = params.find("impl");
  return it != params.end() && it->second == variants::Value{"cub"};
}

}  // namespace varex::harness
