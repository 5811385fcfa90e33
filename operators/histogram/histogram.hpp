#pragma once
// An equi-width histogram of one int32 column: the rows in each of 2^k equal ranges over int32 (the column
// statistics a database's optimiser keeps). The first operator of its family: its workload, space, kernel
// (kernels/histogram.cl over kernels/common/histogram.h), tests and docs are all it adds.
#include <cstdint>
#include <vector>

#include "operators/common/toolkit.hpp"

namespace varex::operators {

// Host reference: counts[b] is the number of values whose top log2(buckets) bits, sign flipped, are b.
std::vector<std::uint32_t> histogram_reference(const std::vector<std::int32_t>& column,
                                               std::uint32_t buckets);

class HistogramOperator final : public Operator {
 public:
  std::string name() const override { return "histogram"; }
  std::string description() const override {
    return "An equi-width histogram of an int32 column: the rows in each of 2^k equal ranges over int32";
  }
  std::string kernel_family() const override { return "histogram"; }
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
