#pragma once
// Red Fox REDUCE BY KEY (document 002, sec. 3.2.9, alg. 10 and 11): for each run of equal consecutive keys
// of a key-value relation, the key and the sum of v0 over the run (unsigned 32-bit, modulo 2^32), dense and
// in input order.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operators/common/relations/relations.hpp"
#include "operators/common/relations/tile_select_operator.hpp"

namespace varex::operators {

// Host reference: (key, sum of v0 modulo 2^32) per run of equal consecutive keys, packed pairs, in order.
std::vector<std::uint32_t> reduce_by_key_reference(const datasets::Relation& relation);

class RaReduceByKeyOperator final : public TileSelectOperator {
 public:
  RaReduceByKeyOperator();
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;

 protected:
  TileSelectParts parts(const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
