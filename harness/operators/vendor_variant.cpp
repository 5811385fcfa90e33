#include "harness/operators/vendor_variant.hpp"

#include <algorithm>
#include <map>

#include "harness/backends/vendor_library.hpp"

namespace varex::harness {

void add_vendor_variant(const DeviceInfo& device, const std::string& call,
                        std::vector<variants::Tunable>& tunables, std::vector<variants::Inactive>& inactive,
                        const std::vector<std::string>& honoured) {
  if (!has_vendor_library(device)) return;
  std::vector<std::string> own;
  for (const variants::Tunable& t : tunables) {
    if (std::find(honoured.begin(), honoured.end(), t.name) == honoured.end()) own.push_back(t.name);
  }
  tunables.push_back({"impl",
                      variants::TunableKind::Launch,
                      {variants::Value{"own"}, variants::Value{"cub"}},
                      variants::Value{"own"},
                      "own: varex's kernels; cub: " + call + " from " + vendor_library()->name +
                          " (built with varex by nvcc)"});
  inactive.push_back({"impl=cub takes none of the own kernels' tunables", is_vendor, std::move(own)});
}

bool is_vendor(const variants::Params& params) {
  const auto it = params.find("impl");
  return it != params.end() && it->second == variants::Value{"cub"};
}

}  // namespace varex::harness
