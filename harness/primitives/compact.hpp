#pragma once
// Stable stream compaction of uint32 by a flag per element (kernels/common/compact.h): out gets in[i] for
// every i < n with flags[i] != 0, in input order, in three launches — compact_count (kept elements per
// tile), scan_sums (their exclusive sums, the total behind them), compact_scatter.
#include <cstdint>
#include <memory>

#include "harness/primitives/scan.hpp"

namespace varex::harness::primitives {

class Compact {
 public:
  // Allocates the tile counts for up to `max_n` elements; tiles as the scan's (`shape`).
  Compact(Engine& engine, std::uint64_t max_n, ScanShape shape = {});
  const ScanShape& shape() const { return shape_; }

  // Enqueues the kernels of a program compiled with shape().defines() holding compact_count, scan_sums
  // and compact_scatter. `out` holds up to n uints; the number kept is left in counts() at byte
  // kept_offset(n).
  void enqueue(const Launcher& launcher, const DeviceBuffer& in, const DeviceBuffer& flags, DeviceBuffer& out,
               std::uint64_t n) const;
  const DeviceBuffer& counts() const { return *counts_; }
  std::size_t kept_offset(std::uint64_t n) const { return shape_.tiles(n) * sizeof(std::uint32_t); }

  // The same on kernels/primitives.cl; `kept` gets the number kept (read back, not counted in the timings).
  Timings run(const DeviceBuffer& in, const DeviceBuffer& flags, DeviceBuffer& out, std::uint64_t n,
              std::uint64_t& kept);

 private:
  Engine& engine_;
  ScanShape shape_;
  std::uint64_t max_n_;
  std::unique_ptr<DeviceBuffer> counts_;
};

}  // namespace varex::harness::primitives
