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

void DeviceScan::run(KernelSequence& seq, const std::string& label, const DeviceBuffer& in, DeviceBuffer& out,
                     std::uint64_t n) {
  primitives::Launcher launcher;
  launcher.launch = [&seq, &label](const std::string& kernel, const LaunchShape& shape,
                                   const std::vector<KernelArg>& args) {
    seq.run(label, kernel, shape, args);
  };
  launcher.fill = [&seq, &label](DeviceBuffer& buffer, std::uint32_t pattern, std::size_t bytes) {
    seq.fill(label, buffer, pattern, bytes);
  };
  scan_.enqueue(launcher, in, out, n);
}

Defines hash_family_defines(const variants::Params& params, const DeviceInfo& device) {
  const std::string& hash = variants::get_string(params, "hash");
  return {{"HASH", hash == "identity" ? "1"
                   : hash == "mult"   ? "2"
                                      : "3"},
          {"DOUBLE_HASH", variants::get_string(params, "probing") == "double" ? "1" : "0"},
          {"MAX_LOCAL", std::to_string(max_local(device))},
          {"SCAN_LOCAL", std::to_string(DeviceScan::kLocal)},  // primitives::ScanShape::defines()
          {"SCAN_ITEMS", std::to_string(DeviceScan::kItems)},
          {"SKETCH_BITS", std::to_string(kSketchBits)}};
}

}  // namespace varex::harness
