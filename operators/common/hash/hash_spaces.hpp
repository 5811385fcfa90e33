#pragma once
#include "variants/space.hpp"

namespace varex::operators {

// The most radix partitions a partitioned variant may use on `device`: one 32-bit counter each in a
// work-group's local memory, at most 8192.
std::uint32_t max_radix_parts(const DeviceInfo& device);

// The bits each buffered partitioning pass takes when `passes` passes share `bits` (scatter=buffered).
std::uint32_t partition_digit_bits(std::uint32_t bits, std::uint32_t passes);
// The most bits one buffered pass takes: 256 digits, a ranking counter each per warp in local memory.
constexpr std::uint32_t kMaxPartitionDigitBits = 8;
// The most bits of a buffered partitioning's partition numbers (the join's radix_bits).
constexpr std::uint32_t kMaxPartitionBits = 16;

// Ocelot's hash join (document 000, sections 2.2.2 and 3.2), plan=source. The default point is the source's
// host code: local size 256, 32 work-groups ("processors", grid=32wg) for hj_count and hj_exec, one tuple
// per batch, no PreprocessHT kernel, the lookup array in private memory, no padding. plan=unique and
// plan=partitioned are varex's own single-pass and radix-partitioned joins.
variants::Space hashjoin_space(const variants::SpaceContext& context);

// Ocelot's hash group-by (document 000, sections 2.2.3 and 3.3) with COUNT, SUM, MIN, MAX. The default
// point is the source's operator: driver's local size, no padding, optimistic build with validation,
// a separate pass for the aggregates in global memory.
variants::Space groupby_space(const variants::SpaceContext& context);

}  // namespace varex::operators
