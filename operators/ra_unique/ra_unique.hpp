#pragma once
// Red Fox UNIQUE (document 002, sec. 3.2.7, alg. 8): drops consecutive duplicates of a key-value relation,
// comparing keys only; the first tuple (key and all values) of each run of equal keys, dense and in input
// order. The input need not be sorted.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datasets/relations.hpp"
#include "operators/common/relations/relation_operator.hpp"

namespace varex::operators {

// Host reference: the first tuple of each run of equal consecutive keys, packed (AoS), in input order.
std::vector<std::uint32_t> unique_reference(const datasets::Relation& relation);

class RaUniqueOperator final : public RelationOperator {
 public:
  RaUniqueOperator()
      : RelationOperator(
            "ra_unique",
            "Red Fox UNIQUE: the first tuple of each run of equal consecutive keys, dense and in input order "
            "(the source's partition, edge, scan and gather kernels, or one compaction)",
            OutputKind::Rows, datasets::KeyDistribution::Runs) {}
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
