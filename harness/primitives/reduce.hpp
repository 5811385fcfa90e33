#pragma once
// Sum of uint32 to a 64-bit total (kernels/common/reduce.h): each work-group sums its strided share of the
// elements, reduces it in the work-group (warp shuffles on CUDA, a local-memory tree on OpenCL) and adds
// it to the total with one 64-bit atomic.
#include <cstdint>
#include <memory>

#include "harness/primitives/launcher.hpp"

namespace varex::harness::primitives {

class Reduce {
 public:
  enum class Width {
    U64,  // reduce_sum: work-group sums in 64 bits
    U32,  // reduce_sum_u32: work-group sums in 32 bits (each work-group's share must stay below 2^32)
  };
  // `groups` 0: enough work-groups to give every work-item one element, at most 256.
  Reduce(Engine& engine, std::uint64_t local = 256, std::uint64_t groups = 0, Width width = Width::U64);

  // MAX_LOCAL (the work-group size), which the program holding the kernel must be compiled with.
  Defines defines() const;
  // Enqueues clearing the total and the sum of in[0..n) into it: result(), one uint64.
  void enqueue(const Launcher& launcher, const DeviceBuffer& in, std::uint64_t n) const;
  const DeviceBuffer& result() const { return *result_; }

  // The same on kernels/primitives.cl; `sum` gets the total (read back, not counted in the timings).
  Timings run(const DeviceBuffer& in, std::uint64_t n, std::uint64_t& sum);

 private:
  Engine& engine_;
  std::uint64_t local_;
  std::uint64_t groups_;
  Width width_;
  std::unique_ptr<DeviceBuffer> result_;
};

}  // namespace varex::harness::primitives
