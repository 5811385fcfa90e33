#pragma once
// What operator runners share for launching: work-group limits, the launch shapes a variant asks for
// (local size, a fixed number of work-groups, padding), and a kernel sequence that keeps each kernel's
// device time.
#include <cstdint>
#include <functional>
#include <memory>
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

// Launch shapes of one variant, from the shared launch vocabulary (variants/launch.hpp): `local` (absent or
// auto: the driver's choice), `padding` (absent: guard, for kernels that always check their bounds) and
// `grid`. "Cover" kernels get one work-item per element; "row" kernels honour a fixed grid.
class LaunchPlan {
 public:
  LaunchPlan(const variants::Params& params, const DeviceInfo& device);
  // Without padding: exactly n work-items, in work-groups of the variant's local size where it divides n,
  // else the driver's. Padded: n rounded up to whole work-groups (of kAutoPadLocal under auto, where the
  // driver still chooses the size; it divides the rounded grid).
  LaunchShape cover(std::uint64_t n) const;
  // Work-items that each take `per_item` of n elements: a fixed grid, or cover(ceil(n / per_item)).
  LaunchShape rows(std::uint64_t n, std::uint64_t per_item = 1) const;
  // Elements a thread-indexed kernel runs over: n, or under host padding n rounded up to whole work-groups
  // of `per_item` elements per work-item (its buffers carry the slack).
  std::uint64_t indexed(std::uint64_t n, std::uint64_t per_item = 1) const;
  // Whether the grid is a fixed number of work-groups (which stride over the elements).
  bool fixed() const { return groups_ != 0; }

 private:
  std::uint64_t pad_local() const { return local_ ? local_ : kAutoPadLocal; }
  std::uint64_t local_ = 0;   // 0: the driver's choice
  std::uint64_t groups_ = 0;  // 0: cover
  std::string padding_;
};

// A buffer's device address as the vendor library takes it (32-bit words), for impl=cub calls.
inline unsigned* vendor_words(Engine& engine, const DeviceBuffer& buffer) {
  return static_cast<unsigned*>(engine.native_address(buffer));
}

// Device scratch for vendor calls, grown on demand and kept between executions (allocated outside any timed
// region).
class VendorScratch {
 public:
  explicit VendorScratch(Engine& engine) : engine_(engine) {}
  void* get(std::size_t bytes);

 private:
  Engine& engine_;
  std::unique_ptr<DeviceBuffer> buffer_;
};

// Runs kernels of one program in order and keeps each one's device time (launches of one label add up).
class KernelSequence {
 public:
  KernelSequence(Engine& engine, const Program& program) : engine_(engine), program_(&program) {}
  // A sequence of vendor calls only (no program of varex's own).
  explicit KernelSequence(Engine& engine) : engine_(engine) {}
  // Skips a launch of no work-items.
  void run(const std::string& label, const std::string& kernel, const LaunchShape& shape,
           const std::vector<KernelArg>& args);
  // Fills a buffer with a 32-bit pattern (clearing an output); its time counts.
  void fill(const std::string& label, DeviceBuffer& buffer, std::uint32_t pattern, std::size_t bytes);
  // Calls the vendor library (Engine::call_native): `call` is first asked for the scratch it needs
  // (temp null; no device work, not timed), then run with it on the engine's stream.
  using VendorCall = std::function<int(void* temp, std::size_t* temp_bytes, void* stream)>;
  void vendor(const std::string& label, VendorScratch& scratch, const VendorCall& call);
  // Downloads a small result the host needs to go on (label "readback"); its time counts.
  void read(HostBuffer& dst, const DeviceBuffer& src, std::size_t bytes, std::size_t offset);
  ExecutionTimes times() const;

 private:
  void add(const std::string& label, double ms);
  Engine& engine_;
  const Program* program_ = nullptr;
  std::vector<KernelTiming> kernels_;
};

}  // namespace varex::harness
