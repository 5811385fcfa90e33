#include "harness/primitives/compact.hpp"

#include <stdexcept>
#include <string>

namespace varex::harness::primitives {

Compact::Compact(Engine& engine, std::uint64_t max_n, ScanShape shape)
    : engine_(engine),
      shape_(shape),
      max_n_(max_n),
      counts_(engine.allocate((shape.tiles(max_n) + 2) * sizeof(std::uint32_t))) {
  if (shape.local == 0 || shape.items == 0 || shape.items > 32)
    throw std::invalid_argument("compaction shape: local > 0 and 1 <= items <= 32");
}

void Compact::enqueue(const Launcher& launcher, const DeviceBuffer& in, const DeviceBuffer& flags,
                      DeviceBuffer& out, std::uint64_t n) const {
  if (n > max_n_)
    throw std::invalid_argument("Compact: " + std::to_string(n) + " elements, sized for " +
                                std::to_string(max_n_));
  const std::uint64_t tiles = shape_.tiles(n);
  const std::uint64_t local = shape_.local;
  const auto n32 = static_cast<std::uint32_t>(n);
  const auto tiles32 = static_cast<std::uint32_t>(tiles);
  launcher.launch("compact_count", {tiles * local, local},
                  {KernelArg::of(flags), KernelArg::of(*counts_), KernelArg::of(n32)});
  launcher.launch("scan_sums", {local, local}, {KernelArg::of(*counts_), KernelArg::of(tiles32)});
  launcher.launch("compact_scatter", {tiles * local, local},
                  {KernelArg::of(in), KernelArg::of(flags), KernelArg::of(*counts_), KernelArg::of(out),
                   KernelArg::of(n32)});
}

Timings Compact::run(const DeviceBuffer& in, const DeviceBuffer& flags, DeviceBuffer& out, std::uint64_t n,
                     std::uint64_t& kept) {
  Timings timings;
  enqueue(timed(engine_, primitives_program(engine_, shape_.defines()), timings), in, flags, out, n);
  auto host = engine_.allocate_host(sizeof(std::uint32_t));
  engine_.download(*host, *counts_, sizeof(std::uint32_t), kept_offset(n))->elapsed_ms();
  kept = *host->as<std::uint32_t>();
  return timings;
}

}  // namespace varex::harness::primitives
