#pragma once
// Ocelot's hash join of two int32 key columns (document 000, sec. 2.2.2 and 3.2): every pair (build row,
// probe row) with equal keys, duplicates on both sides, probe rows in order.
#include <cstdint>
#include <vector>

#include "harness/outputs/pairs.hpp"
#include "operators/common/hash/hash_common.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::PairsReference;
}  // namespace varex::operators

namespace varex::operators {

// The host reference: the pairs (build row, probe row) as the Pairs output kind expects them, the
// build rows of each distinct key being one partner set.
PairsReference join_reference(const std::vector<std::int32_t>& build, const std::vector<std::int32_t>& probe);

// Entries of the partitioned join's local-memory table on `device` (JOIN_SLOTS): 8 bytes each beside the
// work-group scan's scratch, a power of two of at most 4096.
std::uint64_t join_slots(const DeviceInfo& device);

// The join's plans: Ocelot's kernel sequence, varex's single pass for unique build keys, or its
// radix-partitioned join.
enum class JoinPlan { Source, Unique, Partitioned };

// A variant of the join, decoded once: the family's knobs (HashVariant), the plan and the knobs of its
// kernels, and the defines the join's kernels are built with.
struct HashJoinVariant : HashVariant {
  HashJoinVariant(const variants::Params& params, const DeviceInfo& device);
  JoinPlan plan;
  std::uint64_t batch;       // probe rows whose slots a work-item resolves before using them (BATCH)
  bool preprocess;           // PreprocessHT: the probe rows' slots stored once (PREPROCESS)
  bool lookup_local;         // the batch of resolved slots in local memory, not private (LOOKUP_LOCAL)
  bool append_group;         // plan=unique: one atomic per work-group tile, not per work-item (APPEND_GROUP)
  std::uint32_t radix_bits;  // plan=partitioned: 2^bits partitions
};

class HashJoinOperator final : public Operator {
 public:
  std::string name() const override { return "hashjoin"; }
  std::string description() const override {
    return "Ocelot's hash join of two int32 key columns into pairs of row ids (build side --input/--rows, "
           "probe side --input2/--rows2), beside varex's single-pass and radix-partitioned joins";
  }
  std::string kernel_family() const override { return "hash"; }
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  // Fewer probe rows, the same build side: the table's size and its keys decide the best variant. At most a
  // quarter fewer, so that probing still takes most of the time, as at full size: the 2^24 x 2^28 join's
  // best on an H200 built in 1.4 ms and probed in 6.9 ms, and a sixteenth of the probe side would have left
  // the build three quarters of the time.
  std::optional<datasets::WorkloadSpec> small_instance(const datasets::WorkloadSpec& spec,
                                                       std::uint64_t divisor) const override {
    if (divisor > 4) return std::nullopt;
    return datasets::divide_counts(spec, {"rows2"}, divisor);
  }
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // The build and probe keys as the application's int32 arrays; the pairs (build rows, probe rows) in two
  // uint32 arrays of the run's own.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
  std::optional<ContractDecl> contract() const override;
};

}  // namespace varex::operators
