#include "operators/common/relations/compaction.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
}  // namespace varex::operators

namespace varex::operators {

void run_compaction(const KernelLaunch& launch, const Compaction& c, DeviceBuffer& tile_counts,
                    DeviceBuffer& totals, const std::string& prefix) {
  launch(prefix + "count", c.count.name, c.over_tiles, c.count.args);
  launch(prefix + "offsets", "compact_offsets", LaunchShape{c.outputs * c.local, c.local},
         {KernelArg::of(tile_counts), KernelArg::of(totals), KernelArg::of(c.tiles),
          KernelArg::of(Compaction::stride(c.tiles))});
  launch(prefix + "scatter", c.scatter.name, c.over_tiles, c.scatter.args);
}

void run_compaction(KernelSequence& seq, const Compaction& c, DeviceBuffer& tile_counts,
                    DeviceBuffer& totals) {
  run_compaction([&seq](const std::string& label, const std::string& kernel, const LaunchShape& shape,
                        const std::vector<KernelArg>& args) { seq.run(label, kernel, shape, args); },
                 c, tile_counts, totals);
}

}  // namespace varex::operators
