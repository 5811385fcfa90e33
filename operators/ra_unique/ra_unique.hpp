#pragma once
// Red Fox UNIQUE (document 002, sec. 3.2.7, alg. 8): drops consecutive duplicates of a key-value relation,
// comparing keys only; the first tuple (key and all values) of each run of equal keys, dense and in input
// order. The input need not be sorted.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datasets/relations.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// Host reference: the first tuple of each run of equal consecutive keys, packed (AoS), in input order.
std::vector<std::uint32_t> unique_reference(const datasets::Relation& relation);

class RaUniqueOperator final : public Operator {
 public:
  std::string name() const override { return "ra_unique"; }
  std::string description() const override {
    return "Red Fox UNIQUE: the first tuple of each run of equal consecutive keys, dense and in input order "
           "(the source's partition, edge, scan and gather kernels, or one compaction)";
  }
  std::string kernel_family() const override { return "ra_unique"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 2; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
