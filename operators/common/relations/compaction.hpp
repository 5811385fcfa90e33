#pragma once
// The host half of the stable compaction of kernels/common/compact.h, as ra_unique's compact algorithm, the
// set operations and the plan's compacted groups run it, one call each:
//   count    the operator's kernel: every tile's kept items, per output, into the tile counts
//   offsets  compact_offsets, one work-group per output: the counts' exclusive sums in place, each output's
//            total behind its sums and into `totals`
//   scatter  the operator's kernel: every tile's kept items again, written from their tile's offset
// The operator names its two kernels and builds their arguments (with the tile counts where its kernels take
// them); the order of the steps, the offsets step and the layout of the tile counts are the runner's.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/operators/kernel_sequence.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
}  // namespace varex::operators

namespace varex::operators {

// Launches a kernel of the operator's program: a KernelSequence's run, or the plan's own launcher.
using KernelLaunch = std::function<void(const std::string& label, const std::string& kernel,
                                        const LaunchShape& shape, const std::vector<KernelArg>& args)>;

struct CompactionKernel {
  std::string name;
  std::vector<KernelArg> args;
};

struct Compaction {
  CompactionKernel count, scatter;
  LaunchShape over_tiles;     // count and scatter: a work-group per tile, or the variant's grid striding
  std::uint64_t local = 0;    // the kernels' work-group (SCAN_LOCAL), compact_offsets' too
  std::uint32_t tiles = 0;    // tiles of local x items rows
  std::uint32_t outputs = 1;  // outputs compacted at once (a fused plan group's), stride(tiles) words apart

  // Words between two outputs' tile counts: the counts, then their total.
  static std::uint32_t stride(std::uint32_t tiles) { return tiles + 1; }
  // Words of the tile counts of `outputs` outputs of up to `max_tiles` tiles each.
  static std::uint64_t words(std::uint64_t max_tiles, std::uint64_t outputs = 1) {
    return outputs * (max_tiles + 1);
  }
};

// count, compact_offsets, scatter; labels are `prefix` + "count", "offsets", "scatter".
void run_compaction(const KernelLaunch& launch, const Compaction& c, DeviceBuffer& tile_counts,
                    DeviceBuffer& totals, const std::string& prefix = "");
void run_compaction(KernelSequence& seq, const Compaction& c, DeviceBuffer& tile_counts,
                    DeviceBuffer& totals);

}  // namespace varex::operators
