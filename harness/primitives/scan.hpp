#pragma once
// Device-wide exclusive prefix sum of uint32 (kernels/common/scan.h, scan_kernels.h): out[0..n) gets the
// exclusive sums of in[0..n) and out[n] the total, in three launches — scan_tiles (one work-group per
// tile of local * items elements), scan_sums (one work-group over the tile totals), scan_add.
#include <cstdint>
#include <memory>

#include "harness/primitives/launcher.hpp"

namespace varex::harness::primitives {

struct ScanShape {
  std::uint64_t local = 128;  // SCAN_LOCAL: work-group size of scan_tiles and scan_sums
  std::uint64_t items = 8;    // SCAN_ITEMS: elements per work-item
  std::uint64_t tile() const { return local * items; }
  std::uint64_t tiles(std::uint64_t n) const { return (n + tile() - 1) / tile(); }
  // SCAN_LOCAL and SCAN_ITEMS, which the program holding the kernels must be compiled with.
  Defines defines() const;
};

class DeviceScan {
 public:
  // Allocates the tile totals for up to `max_n` elements.
  DeviceScan(Engine& engine, std::uint64_t max_n, ScanShape shape = {});
  const ScanShape& shape() const { return shape_; }

  // Enqueues the three kernels of a program compiled with shape().defines(). `out` holds n + 1 uints;
  // `in` may be `out`.
  void enqueue(const Launcher& launcher, const DeviceBuffer& in, DeviceBuffer& out, std::uint64_t n) const;
  // The same on kernels/primitives.cl (compiled on first use); the device time of each kernel.
  Timings run(const DeviceBuffer& in, DeviceBuffer& out, std::uint64_t n);

  // The tile totals, exclusive-scanned after a run, their sum behind them (for users that scan their own
  // per-tile counts with scan_sums, as the compaction does).
  DeviceBuffer& tile_sums() { return *tile_sums_; }

 private:
  Engine& engine_;
  ScanShape shape_;
  std::uint64_t max_n_;
  std::unique_ptr<DeviceBuffer> tile_sums_;
};

}  // namespace varex::harness::primitives
