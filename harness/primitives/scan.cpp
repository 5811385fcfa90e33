#include "harness/primitives/scan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace varex::harness::primitives {

Defines ScanShape::defines() const {
  return {{"SCAN_LOCAL", std::to_string(local)}, {"SCAN_ITEMS", std::to_string(items)}};
}

DeviceScan::DeviceScan(Engine& engine, std::uint64_t max_n, ScanShape shape)
    : engine_(engine),
      shape_(shape),
      max_n_(max_n),
      tile_sums_(engine.allocate((shape.tiles(max_n) + 2) * sizeof(std::uint32_t))) {
  if (shape.local == 0 || shape.items == 0 || shape.items > 32)
    throw std::invalid_argument("scan shape: local > 0 and 1 <= items <= 32");
}

void DeviceScan::enqueue(const Launcher& launcher, const DeviceBuffer& in, DeviceBuffer& out,
                         std::uint64_t n) const {
  if (n > max_n_)
    throw std::invalid_argument("DeviceScan: " + std::to_string(n) + " elements, sized for " +
                                std::to_string(max_n_));
  const std::uint64_t tiles = shape_.tiles(n);
  const std::uint64_t local = shape_.local;
  const auto n32 = static_cast<std::uint32_t>(n);
  const auto tiles32 = static_cast<std::uint32_t>(tiles);
  launcher.launch("scan_tiles", {tiles * local, local},
                  {KernelArg::of(in), KernelArg::of(out), KernelArg::of(*tile_sums_), KernelArg::of(n32)});
  launcher.launch("scan_sums", {local, local}, {KernelArg::of(*tile_sums_), KernelArg::of(tiles32)});
  const std::uint64_t cover = std::max<std::uint64_t>(n, 1);
  launcher.launch(
      "scan_add", {(cover + local - 1) / local * local, local},
      {KernelArg::of(out), KernelArg::of(*tile_sums_), KernelArg::of(n32), KernelArg::of(tiles32)});
}

Timings DeviceScan::run(const DeviceBuffer& in, DeviceBuffer& out, std::uint64_t n) {
  Timings timings;
  enqueue(timed(engine_, primitives_program(engine_, shape_.defines()), timings), in, out, n);
  return timings;
}

}  // namespace varex::harness::primitives
