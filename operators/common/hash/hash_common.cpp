#include "operators/common/hash/hash_common.hpp"

#include <algorithm>
#include <bit>

#include "base/errors.hpp"
#include "operators/common/hash/hash_spaces.hpp"

namespace varex::operators {

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

namespace {

// Chunks (work-groups) of a partitioning pass: about 2048 rows each, at most 1024 of them, which fills a
// large GPU once and keeps the counts (partitions x chunks) small.
constexpr std::uint64_t kChunkRows = 2048;
constexpr std::uint64_t kMaxChunks = 1024;

std::uint64_t chunks_for(std::uint64_t rows) {
  return std::clamp<std::uint64_t>((rows + kChunkRows - 1) / kChunkRows, 1, kMaxChunks);
}

HashFunction hash_function_named(const std::string& hash) {
  return hash == "identity" ? HashFunction::Identity
         : hash == "mult"   ? HashFunction::Mult
                            : HashFunction::Murmur;
}

std::uint64_t hash_partition_local(const variants::Params& params, const DeviceInfo& device) {
  const auto local = static_cast<std::uint64_t>(variants::get_int_or(params, "local", 0));
  return local ? local : std::min<std::uint64_t>(256, max_local(device));
}

}  // namespace

RadixPartition::RadixPartition(Engine& engine, std::uint64_t max_rows, std::uint64_t max_parts)
    : scan_(engine, max_parts * chunks_for(max_rows) + 1) {
  counts_ = engine.allocate(max_parts * chunks_for(max_rows) * 4);
  offsets_ = engine.allocate((max_parts * chunks_for(max_rows) + 1) * 4);
}

void RadixPartition::run(KernelSequence& seq, const std::string& label, const DeviceBuffer& keys,
                         const DeviceBuffer& payload, bool row_payload, DeviceBuffer& out_keys,
                         DeviceBuffer& out_payload, std::uint64_t n, std::uint32_t multiply,
                         std::uint32_t shift, std::uint32_t parts, std::uint64_t local) {
  chunks_ = static_cast<std::uint32_t>(chunks_for(n));
  const LaunchShape shape{chunks_ * local, local};
  const auto rows = KernelArg::of(static_cast<std::uint32_t>(n));
  const auto mul = KernelArg::of(multiply), sh = KernelArg::of(shift), p = KernelArg::of(parts);
  seq.run(label, "radix_count", shape, {KernelArg::of(keys), KernelArg::of(*counts_), rows, mul, sh, p});
  scan_.run(seq, label, *counts_, *offsets_, std::uint64_t{parts} * chunks_);
  seq.run(
      label, "radix_scatter", shape,
      {KernelArg::of(keys), KernelArg::of(payload), KernelArg::of(*offsets_), KernelArg::of(out_keys),
       KernelArg::of(out_payload), rows, mul, sh, p, KernelArg::of(static_cast<std::uint32_t>(row_payload))});
}

HashVariant::HashVariant(const variants::Params& params, const DeviceInfo& device)
    : LaunchBundle(params, device),
      hash(hash_function_named(variants::get_string(params, "hash"))),
      double_hash(variants::get_string(params, "probing") == "double"),
      load(variants::get_int(params, "load")),
      partition_local(hash_partition_local(params, device)),
      max_parts(max_radix_parts(device)) {
  defines = {{"HASH", hash == HashFunction::Identity ? "1"
                      : hash == HashFunction::Mult   ? "2"
                                                     : "3"},
             {"DOUBLE_HASH", double_hash ? "1" : "0"},
             {"MAX_LOCAL", std::to_string(max_local(device))},
             {"SCAN_LOCAL", std::to_string(DeviceScan::kLocal)},  // primitives::ScanShape::defines()
             {"SCAN_ITEMS", std::to_string(DeviceScan::kItems)},
             {"SKETCH_BITS", std::to_string(kSketchBits)},
             {"MAX_PARTS", std::to_string(max_parts)}};
}

}  // namespace varex::operators
