#pragma once
// What the hash join and the group-by runners share: the table's geometry, the device prefix sum (the
// shared one of harness/primitives/scan.hpp) and the defines of the "hash" kernel family (kernels/hash.cl).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/primitives/scan.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::KernelSequence;
using harness::LaunchBundle;
namespace primitives = harness::primitives;
}  // namespace varex::operators

namespace varex::operators {

// Slots of the open-addressing table: a power of two (mask + 1), plus the reserved slot for INT_MIN.
struct TableGeometry {
  std::uint32_t mask = 0;
  std::uint32_t shift = 0;  // 32 - log2(slots), for multiplicative hashing
  std::uint64_t slots() const { return std::uint64_t{mask} + 1; }
};
// The smallest power of two (at least 1024) that keeps `keys` keys at or below `load_percent` percent.
TableGeometry table_for(std::uint64_t keys, std::int64_t load_percent);

// Exclusive prefix sum of n uint32 values on the device: out[0..n), then the total at out[n]. The
// kernels (scan_tiles, scan_sums, scan_add) are kernels/common/scan_kernels.h's, in the hash program;
// each launch is timed under the runner's label.
class DeviceScan {
 public:
  // The scan's shape in the hash family (SCAN_LOCAL, SCAN_ITEMS).
  static constexpr std::uint64_t kLocal = 128;
  static constexpr std::uint64_t kItems = 8;
  DeviceScan(Engine& engine, std::uint64_t max_n) : scan_(engine, max_n, {kLocal, kItems}) {}
  void run(KernelSequence& seq, const std::string& label, const DeviceBuffer& in, DeviceBuffer& out,
           std::uint64_t n);

 private:
  primitives::DeviceScan scan_;
};

// log2 of the HyperLogLog registers the group-by sizes its table with (SKETCH_BITS).
constexpr int kSketchBits = 12;

// How a partitioned variant partitions its rows (the `scatter` and `passes` tunables), decoded once.
struct PartitionScheme {
  // The work-group size of the partitioning kernels and of those that walk partitions: the variant's
  // `local`, or 256 (within the device's largest) where the driver would choose.
  std::uint64_t local = 256;
  // scatter=buffered: passes of `digit_bits` bits each, lowest first, through local memory
  // (radix_scatter_tiles), as many as the partition numbers need; else one direct pass (radix_scatter).
  bool buffered = false;
  std::uint32_t digit_bits = 0;
  std::uint64_t tile = 0;  // buffered: rows a work-group stages at a time (WG_SIZE x EPT)
  // The passes that `parts` partitions take: as many digits as their numbers have, 1 for a direct pass.
  std::uint32_t passes_for(std::uint32_t parts) const;
};

// Radix partitioning on the device (kernels radix_count, radix_scatter, radix_scatter_tiles and
// partition_starts of the hash family): the rows are cut into a fixed number of chunks, one per work-group;
// the rows of every chunk in every partition are counted, prefix-summed (partition-major) and scattered, so
// that partition p ends up contiguous at [offset(p), offset(p + 1)) in the output. Buffered, that happens
// once per digit of the partition number, through scratch columns of its own, and the partitions' starts are
// read off the ordered output.
class RadixPartition {
 public:
  // Up to `max_rows` rows into at most `max_parts` partitions (2^kMaxPartitionBits buffered).
  RadixPartition(Engine& engine, std::uint64_t max_rows, std::uint64_t max_parts);
  // keys[0..n) and their payload (payload[i], or the row index i with `row_payload`) into out_keys and
  // out_payload, partition (key * multiply) >> shift of `parts`, as `scheme` says. With `starts`, offsets()
  // holds where the partitions start afterwards. Each launch is timed under `label`.
  void run(KernelSequence& seq, const std::string& label, const DeviceBuffer& keys,
           const DeviceBuffer& payload, bool row_payload, DeviceBuffer& out_keys, DeviceBuffer& out_payload,
           std::uint64_t n, std::uint32_t multiply, std::uint32_t shift, std::uint32_t parts,
           const PartitionScheme& scheme, bool starts = true);
  // Where the partitions of the last run start: partition p at offsets()[p * stride()], the end at
  // offsets()[parts * stride()].
  const DeviceBuffer& offsets() const { return *offsets_; }
  std::uint32_t stride() const { return stride_; }

 private:
  Engine& engine_;
  std::uint64_t max_rows_;
  std::uint32_t stride_ = 1;
  std::unique_ptr<DeviceBuffer> counts_, offsets_, pass_offsets_;
  // The buffered passes' other pair of columns, allocated when a buffered variant first asks for them.
  std::unique_ptr<DeviceBuffer> scratch_keys_, scratch_payload_;
  DeviceScan scan_;
};

// The family's hash functions (HASH).
enum class HashFunction { Identity, Mult, Murmur };

// A variant of the hash family, decoded once: what the join's and the group-by's bundles share (the hash,
// probing, the table's load, the partitioning kernels' work-group and partitions), and in `defines` the
// family's defines every variant shares (hash, probing, scan shape, the device's largest work-group), to
// which an operator's bundle appends its own.
struct HashVariant : LaunchBundle {
  // `partition_bits`: the most bits a partition number of the operator's partitioned variant has.
  HashVariant(const variants::Params& params, const DeviceInfo& device, std::uint32_t partition_bits);
  HashFunction hash;
  bool double_hash;   // probing=double: the pessimistic build's second hash gives each key an odd step
  std::int64_t load;  // the table's largest load in percent of its slots (table_for)
  PartitionScheme partition;
  std::uint32_t max_parts;  // the most radix partitions on the device (MAX_PARTS, max_radix_parts)
};

}  // namespace varex::operators
