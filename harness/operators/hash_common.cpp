#include "harness/operators/hash_common.hpp"

#include <algorithm>
#include <bit>

#include "base/errors.hpp"

namespace varex::harness {

TableGeometry table_for(std::uint64_t keys, std::int64_t load_percent) {
  std::uint64_t slots = 1024;
  while (keys * 100 > slots * static_cast<std::uint64_t>(load_percent)) slots *= 2;
  if (slots > (1ULL << 31))
    throw UsageError("input too large: the hash table would need more than 2^31 slots");
  TableGeometry g;
  g.mask = static_cast<std::uint32_t>(slots - 1);
  g.shift = 32 - static_cast<std::uint32_t>(std::countr_zero(slots));
  return g;
}

DeviceScan::DeviceScan(Engine& engine, std::uint64_t max_n)
    : tile_sums_(engine.allocate((max_n / (kLocal * kItems) + 2) * 4)) {}

void DeviceScan::run(KernelSequence& seq, const std::string& label, const DeviceBuffer& in, DeviceBuffer& out,
                     std::uint64_t n) {
  const std::uint64_t tiles = (n + kLocal * kItems - 1) / (kLocal * kItems);
  const auto n32 = static_cast<std::uint32_t>(n);
  const auto tiles32 = static_cast<std::uint32_t>(tiles);
  seq.run(label, "scan_tiles", {tiles * kLocal, kLocal},
          {KernelArg::of(in), KernelArg::of(out), KernelArg::of(*tile_sums_), KernelArg::of(n32)});
  seq.run(label, "scan_sums", {kLocal, kLocal}, {KernelArg::of(*tile_sums_), KernelArg::of(tiles32)});
  seq.run(label, "scan_add", {round_up(std::max<std::uint64_t>(n, 1), kLocal), kLocal},
          {KernelArg::of(out), KernelArg::of(*tile_sums_), KernelArg::of(n32), KernelArg::of(tiles32)});
}

Defines hash_family_defines(const variants::Params& params, const DeviceInfo& device) {
  const std::string& hash = variants::get_string(params, "hash");
  return {{"HASH", hash == "identity" ? "1"
                   : hash == "mult"   ? "2"
                                      : "3"},
          {"DOUBLE_HASH", variants::get_string(params, "probing") == "double" ? "1" : "0"},
          {"MAX_LOCAL", std::to_string(max_local(device))},
          {"SCAN_LOCAL", std::to_string(DeviceScan::kLocal)},
          {"SCAN_ITEMS", std::to_string(DeviceScan::kItems)},
          {"SKETCH_BITS", std::to_string(kSketchBits)}};
}

}  // namespace varex::harness
