#pragma once
// What operator runners share for launching: work-group limits, the launch shapes a variant asks for
// (local size, a fixed number of work-groups, padding), and a kernel sequence that keeps each kernel's
// device time.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/operators/operator.hpp"

namespace varex::harness {

// The work-group size padding rounds to when the driver chooses the local size (Fett's 128).
constexpr std::uint64_t kAutoPadLocal = 128;
// The largest work-group a variant may ask for on `device`, rounded down to a power of two (at least 128).
std::uint64_t max_local(const DeviceInfo& device);

inline std::uint64_t round_up(std::uint64_t value, std::uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Launch shapes of one variant with the tunables `local`, `padding` (none, host, guard) and a grid
// tunable (`cover` or a number of work-groups). "Cover" kernels get one work-item per element; "row"
// kernels honour the fixed number of work-groups when the variant has one.
class LaunchPlan {
 public:
  LaunchPlan(const variants::Params& params, const std::string& grid_tunable);
  // Without padding: exactly n work-items and the driver's local size; else rounded up to whole groups.
  LaunchShape cover(std::uint64_t n) const;
  LaunchShape rows(std::uint64_t n, std::uint64_t per_item = 1) const;
  // Elements a thread-indexed kernel runs over: n, or n rounded up to whole work-groups under host padding
  // (its buffers carry the slack).
  std::uint64_t indexed(std::uint64_t n) const;

 private:
  std::uint64_t local_ = 0;   // 0: the driver's choice
  std::uint64_t groups_ = 0;  // 0: cover
  std::string padding_;
};

// Runs kernels of one program in order and keeps each one's device time (launches of one label add up).
class KernelSequence {
 public:
  KernelSequence(Engine& engine, const Program& program) : engine_(engine), program_(program) {}
  // Skips a launch of no work-items.
  void run(const std::string& label, const std::string& kernel, const LaunchShape& shape,
           const std::vector<KernelArg>& args);
  // Fills a buffer with a 32-bit pattern (clearing an output); its time counts.
  void fill(const std::string& label, DeviceBuffer& buffer, std::uint32_t pattern, std::size_t bytes);
  // Downloads a small result the host needs to go on (label "readback"); its time counts.
  void read(HostBuffer& dst, const DeviceBuffer& src, std::size_t bytes, std::size_t offset);
  ExecutionTimes times() const;

 private:
  void add(const std::string& label, double ms);
  Engine& engine_;
  const Program& program_;
  std::vector<KernelTiming> kernels_;
};

}  // namespace varex::harness
