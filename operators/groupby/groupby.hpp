#pragma once
// Ocelot's hash group-by (document 000, sec. 2.2.3 and 3.3) over an int32 grouping column, with COUNT,
// SUM, MIN and MAX of an int32 value column per group: a group id per row, one representative row per
// group (the extents table), and the aggregates.
#include <cstdint>
#include <vector>

#include "harness/outputs/groups.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// The host reference: every group once, ordered by key (the Groups output kind's reference).
GroupReference group_reference(const std::vector<std::int32_t>& keys,
                               const std::vector<std::int32_t>& values);

// The HyperLogLog estimate of the distinct keys from 2^bits registers (the largest rank seen per bucket).
double hyperloglog_estimate(const std::vector<std::uint32_t>& registers);

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
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
