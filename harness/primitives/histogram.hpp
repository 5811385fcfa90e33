#pragma once
// Histograms (kernels/common/histogram.h): each work-group counts its strided share of the input into
// bins in local memory with local atomics, then adds its non-zero bins to the global ones.
#include <cstdint>

#include "harness/primitives/launcher.hpp"

namespace varex::harness::primitives {

class Histogram {
 public:
  // `bins`: of the key histogram (HIST_BINS); the byte histogram has 256. `groups` 0: enough work-groups
  // to give every work-item one element, at most 256.
  Histogram(Engine& engine, std::uint32_t bins = 256, std::uint64_t local = 256, std::uint64_t groups = 0);

  // HIST_BINS, which the program holding the kernels must be compiled with.
  Defines defines() const;
  // Clears `out` and counts the n bytes of `in` into its 256 uint32 bins.
  void enqueue_bytes(const Launcher& launcher, const DeviceBuffer& in, std::uint64_t n,
                     DeviceBuffer& out) const;
  // Clears `out` and counts the n uint32 keys of `in` below `bins` into its `bins` uint32 bins (larger
  // keys are not counted).
  void enqueue_keys(const Launcher& launcher, const DeviceBuffer& in, std::uint64_t n,
                    DeviceBuffer& out) const;

  // The same on kernels/primitives.cl.
  Timings run_bytes(const DeviceBuffer& in, std::uint64_t n, DeviceBuffer& out);
  Timings run_keys(const DeviceBuffer& in, std::uint64_t n, DeviceBuffer& out);

 private:
  LaunchShape shape(std::uint64_t n) const;
  Engine& engine_;
  std::uint32_t bins_;
  std::uint64_t local_;
  std::uint64_t groups_;
};

}  // namespace varex::harness::primitives
