#pragma once
// Ocelot's hash group-by (document 000, sec. 2.2.3 and 3.3) over an int32 grouping column, with COUNT,
// SUM, MIN and MAX of an int32 value column per group: a group id per row, one representative row per
// group (the extents table), and the aggregates.
#include <cstdint>
#include <vector>

#include "harness/outputs/groups.hpp"
#include "operators/common/hash/hash_common.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::GroupReference;
}  // namespace varex::operators

namespace varex::operators {

// The host reference: every group once, ordered by key (the Groups output kind's reference).
GroupReference group_reference(const std::vector<std::int32_t>& keys,
                               const std::vector<std::int32_t>& values);

// The HyperLogLog estimate of the distinct keys from 2^bits registers (the largest rank seen per bucket).
double hyperloglog_estimate(const std::vector<std::uint32_t>& registers);

// Where the group-by's aggregates are computed (agg): in global memory with atomics, in a work-group's local
// memory (first in registers, or combined by warp vote before), or over radix-partitioned pairs.
enum class GroupAggregation { Global, Local, Registers, Warp, Partitioned };

// A variant of the group-by, decoded once: the family's knobs (HashVariant), the build, the aggregation,
// where the extents come from, the fusion and the table's sizing, and the defines the group-by's kernels are
// built with.
struct GroupByVariant : HashVariant {
  GroupByVariant(const variants::Params& params, const DeviceInfo& device);
  bool optimistic;  // build=optimistic: written without atomics, validated, rebuilt on a collision
  GroupAggregation agg;
  bool extents_at_build;  // extents=build: the row that placed each key is its group's extent, no pass
  bool fused;             // fuse=on: the grouping kernel also aggregates (FUSED)
  bool sketch;            // sizing=sketch: the table sized by a HyperLogLog estimate of the distinct keys
  std::uint64_t local_groups;  // groups a work-group aggregates in local memory (LOCAL_GROUPS)
};

class GroupByOperator final : public Operator {
 public:
  std::string name() const override { return "groupby"; }
  std::string description() const override {
    return "Ocelot's hash group-by of an int32 key column with COUNT, SUM, MIN, MAX of an int32 value "
           "column (--input key,value lines, or --rows/--distinct/--zipf)";
  }
  std::string kernel_family() const override { return "hash"; }
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  std::optional<ContractDecl> contract() const override;
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // The keys and the values as two of the application's int32 arrays of the same rows; the groups (keys,
  // counts, sums, mins, maxs, extents) and the rows' group ids in arrays of the run's own.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
};

}  // namespace varex::operators
