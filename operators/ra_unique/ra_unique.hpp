#pragma once
// Red Fox UNIQUE (document 002, sec. 3.2.7, alg. 8): drops consecutive duplicates of a key-value relation,
// comparing keys only; the first tuple (key and all values) of each run of equal keys, dense and in input
// order. The input need not be sorted.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operators/common/relations/relations.hpp"
#include "operators/common/relations/tile_select_operator.hpp"

namespace varex::operators {

// Host reference: the first tuple of each run of equal consecutive keys, packed (AoS), in input order.
std::vector<std::uint32_t> unique_reference(const datasets::Relation& relation);

class RaUniqueOperator final : public TileSelectOperator {
 public:
  RaUniqueOperator();
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;

 protected:
  TileSelectParts parts(const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
