#include "harness/primitives/histogram.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace varex::harness::primitives {

Histogram::Histogram(Engine& engine, std::uint32_t bins, std::uint64_t local, std::uint64_t groups)
    : engine_(engine), bins_(bins), local_(local), groups_(groups) {
  if (bins == 0 || local == 0) throw std::invalid_argument("Histogram: bins and local must be positive");
}

Defines Histogram::defines() const {
  return {{"HIST_BINS", std::to_string(bins_)}};
}

LaunchShape Histogram::shape(std::uint64_t n) const {
  const std::uint64_t groups =
      groups_ ? groups_ : std::clamp<std::uint64_t>((n + local_ - 1) / local_, 1, 256);
  return {groups * local_, local_};
}

void Histogram::enqueue_bytes(const Launcher& launcher, const DeviceBuffer& in, std::uint64_t n,
                              DeviceBuffer& out) const {
  launcher.fill(out, 0, 256 * sizeof(std::uint32_t));
  launcher.launch("histogram_bytes", shape(n),
                  {KernelArg::of(in), KernelArg::of(out), KernelArg::of(static_cast<std::uint32_t>(n))});
}

void Histogram::enqueue_keys(const Launcher& launcher, const DeviceBuffer& in, std::uint64_t n,
                             DeviceBuffer& out) const {
  launcher.fill(out, 0, std::size_t{bins_} * sizeof(std::uint32_t));
  launcher.launch("histogram_keys", shape(n),
                  {KernelArg::of(in), KernelArg::of(out), KernelArg::of(static_cast<std::uint32_t>(n))});
}

Timings Histogram::run_bytes(const DeviceBuffer& in, std::uint64_t n, DeviceBuffer& out) {
  Timings timings;
  enqueue_bytes(timed(engine_, primitives_program(engine_, defines()), timings), in, n, out);
  return timings;
}

Timings Histogram::run_keys(const DeviceBuffer& in, std::uint64_t n, DeviceBuffer& out) {
  Timings timings;
  enqueue_keys(timed(engine_, primitives_program(engine_, defines()), timings), in, n, out);
  return timings;
}

}  // namespace varex::harness::primitives
