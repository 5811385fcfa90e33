#include "operators/common/hash/hash_common.hpp"

#include <algorithm>
#include <bit>

#include "base/errors.hpp"
#include "operators/common/hash/hash_spaces.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::LaunchBundle;
using harness::max_local;
using harness::warp_ballot_defines;
namespace primitives = harness::primitives;
}  // namespace varex::operators

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

// Rows a buffered pass stages per work-group: up to 16 per work-item and 4096 in all (a run of 16 rows per
// digit on average at 8 bits), with the staged keys and payloads, the scan and the digits' counters within
// the device's local memory.
std::uint64_t partition_tile(std::uint64_t local, std::uint32_t digit_bits, const DeviceInfo& device) {
  const std::uint64_t local_mem = device.local_mem ? device.local_mem : 32768;
  const std::uint64_t fixed = 4 * (local + 1) + 12 * (std::uint64_t{1} << digit_bits) + 64;
  std::uint64_t tile = std::min<std::uint64_t>(4096, local * 16);
  while (tile > local && fixed + tile * 8 > local_mem) tile /= 2;
  return tile;
}

PartitionScheme partition_scheme(const variants::Params& params, const DeviceInfo& device,
                                 std::uint32_t partition_bits) {
  PartitionScheme scheme;
  scheme.local = hash_partition_local(params, device);
  scheme.buffered = variants::get_string(params, "scatter") == "buffered";
  if (scheme.buffered) {
    const auto passes = static_cast<std::uint32_t>(variants::get_int(params, "passes"));
    scheme.digit_bits = std::max<std::uint32_t>(1, partition_digit_bits(partition_bits, passes));
    scheme.tile = partition_tile(scheme.local, scheme.digit_bits, device);
  }
  return scheme;
}

}  // namespace

std::uint32_t PartitionScheme::passes_for(std::uint32_t parts) const {
  if (!buffered) return 1;
  const auto bits = static_cast<std::uint32_t>(std::bit_width(std::max<std::uint32_t>(parts, 1) - 1));
  return std::max<std::uint32_t>(1, (bits + digit_bits - 1) / digit_bits);
}

RadixPartition::RadixPartition(Engine& engine, std::uint64_t max_rows, std::uint64_t max_parts)
    : engine_(engine),
      max_rows_(max_rows),
      scan_(engine,
            std::max<std::uint64_t>(max_parts, 1u << kMaxPartitionDigitBits) * chunks_for(max_rows) + 1) {
  const std::uint64_t counters =
      std::max<std::uint64_t>(max_parts, 1u << kMaxPartitionDigitBits) * chunks_for(max_rows);
  counts_ = engine.allocate(counters * 4);
  offsets_ = engine.allocate((std::max<std::uint64_t>(counters, 1u << kMaxPartitionBits) + 1) * 4);
  pass_offsets_ = engine.allocate((counters + 1) * 4);
}

void RadixPartition::run(KernelSequence& seq, const std::string& label, const DeviceBuffer& keys,
                         const DeviceBuffer& payload, bool row_payload, DeviceBuffer& out_keys,
                         DeviceBuffer& out_payload, std::uint64_t n, std::uint32_t multiply,
                         std::uint32_t shift, std::uint32_t parts, const PartitionScheme& scheme,
                         bool starts) {
  const auto chunks = static_cast<std::uint32_t>(chunks_for(n));
  const LaunchShape shape{chunks * scheme.local, scheme.local};
  const auto rows = KernelArg::of(static_cast<std::uint32_t>(n));
  const auto mul = KernelArg::of(multiply), sh = KernelArg::of(shift);
  const auto count = [&](const DeviceBuffer& in, DeviceBuffer& offsets, std::uint32_t bins, std::uint32_t low,
                         std::uint32_t mask) {
    seq.run(label, "radix_count", shape,
            {KernelArg::of(in), KernelArg::of(*counts_), rows, mul, sh, KernelArg::of(bins),
             KernelArg::of(low), KernelArg::of(mask)});
    scan_.run(seq, label, *counts_, offsets, std::uint64_t{bins} * chunks);
  };
  if (!scheme.buffered) {
    // Each chunk's place in each partition, which is also where the partitions start.
    count(keys, *offsets_, parts, 0, ~0u);
    stride_ = chunks;
    seq.run(label, "radix_scatter", shape,
            {KernelArg::of(keys), KernelArg::of(payload), KernelArg::of(*offsets_), KernelArg::of(out_keys),
             KernelArg::of(out_payload), rows, mul, sh, KernelArg::of(parts),
             KernelArg::of(static_cast<std::uint32_t>(row_payload))});
    return;
  }
  const std::uint32_t passes = scheme.passes_for(parts);
  if (passes > 1 && !scratch_keys_) {
    scratch_keys_ = engine_.allocate(std::max<std::uint64_t>(max_rows_, 1) * 4);
    scratch_payload_ = engine_.allocate(std::max<std::uint64_t>(max_rows_, 1) * 4);
  }
  const std::uint32_t bins = 1u << scheme.digit_bits;
  const DeviceBuffer* in_keys = &keys;
  const DeviceBuffer* in_payload = &payload;
  for (std::uint32_t pass = 0; pass < passes; ++pass) {
    // The passes alternate between the scratch columns and the output, ending in the output.
    const bool to_out = (passes - 1 - pass) % 2 == 0;
    DeviceBuffer& to_keys = to_out ? out_keys : *scratch_keys_;
    DeviceBuffer& to_payload = to_out ? out_payload : *scratch_payload_;
    const std::uint32_t low = pass * scheme.digit_bits;
    count(*in_keys, *pass_offsets_, bins, low, bins - 1);
    seq.run(label, "radix_scatter_tiles", shape,
            {KernelArg::of(*in_keys), KernelArg::of(*in_payload), KernelArg::of(*pass_offsets_),
             KernelArg::of(to_keys), KernelArg::of(to_payload), rows, mul, sh, KernelArg::of(low),
             KernelArg::of(static_cast<std::uint32_t>(row_payload && pass == 0))});
    in_keys = &to_keys;
    in_payload = &to_payload;
  }
  stride_ = 1;
  if (starts) {
    seq.run(label, "partition_starts", shape,
            {KernelArg::of(out_keys), KernelArg::of(*offsets_), rows, mul, sh, KernelArg::of(parts)});
  }
}

HashVariant::HashVariant(const variants::Params& params, const DeviceInfo& device,
                         std::uint32_t partition_bits)
    : LaunchBundle(params, device),
      hash(hash_function_named(variants::get_string(params, "hash"))),
      double_hash(variants::get_string(params, "probing") == "double"),
      load(variants::get_int(params, "load")),
      partition(partition_scheme(params, device, partition_bits)),
      max_parts(max_radix_parts(device)) {
  defines = {{"HASH", hash == HashFunction::Identity ? "1"
                      : hash == HashFunction::Mult   ? "2"
                                                     : "3"},
             {"DOUBLE_HASH", double_hash ? "1" : "0"},
             {"MAX_LOCAL", std::to_string(max_local(device))},
             {"SCAN_LOCAL", std::to_string(DeviceScan::kLocal)},  // primitives::ScanShape::defines()
             {"SCAN_ITEMS", std::to_string(DeviceScan::kItems)},
             {"SKETCH_BITS", std::to_string(kSketchBits)},
             {"MAX_PARTS", std::to_string(max_parts)},
             {"PART_BUFFERED", partition.buffered ? "1" : "0"}};
  if (partition.buffered) {
    defines.push_back({"WG_SIZE", std::to_string(partition.local)});
    defines.push_back({"EPT", std::to_string(partition.tile / partition.local)});
    defines.push_back({"BITS", std::to_string(partition.digit_bits)});
    defines.push_back({"BINS", std::to_string(1u << partition.digit_bits)});
    for (Define& d : warp_ballot_defines(device)) defines.push_back(std::move(d));
  }
}

}  // namespace varex::operators
