#pragma once
// Warm start: what earlier sessions learned starts the next one. A tune first measures the re-measured
// bests ("best", docs/PROFILE.md) that the store holds for the same operator, nearest first: the same
// device model before other devices, then the same workload shape before other shapes, then the nearest
// scale (rows and the other numeric parameters, by their ratio). Each is taken over into the space being
// searched (its tunables that this space has, with values it offers, over the defaults); points the space
// cannot take are left out.
#include <cstddef>
#include <vector>

#include "base/device.hpp"
#include "base/workload.hpp"
#include "results/store.hpp"
#include "variants/space.hpp"

namespace varex::tuner {

struct WarmStartSource {
  DeviceInfo device;
  datasets::WorkloadClass workload_class;
  variants::Params params;
};

// The points to measure first, nearest first, distinct, at most `limit`.
std::vector<variants::Params> warm_start_points(const std::vector<WarmStartSource>& sources,
                                                const DeviceInfo& device,
                                                const datasets::WorkloadClass& target,
                                                const variants::Space& space, std::size_t limit = 4);

// The store's re-measured bests of `op` as sources.
std::vector<WarmStartSource> recorded_bests(results::Store& store, const std::string& op);

}  // namespace varex::tuner
