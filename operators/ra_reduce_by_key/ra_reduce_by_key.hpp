#pragma once
// Red Fox REDUCE BY KEY (document 002, sec. 3.2.9, alg. 10 and 11): for each run of equal consecutive keys
// of a key-value relation, the key and the sum of v0 over the run (unsigned 32-bit, modulo 2^32), dense and
// in input order.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datasets/relations.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// Host reference: (key, sum of v0 modulo 2^32) per run of equal consecutive keys, packed pairs, in order.
std::vector<std::uint32_t> reduce_by_key_reference(const datasets::Relation& relation);

class RaReduceByKeyOperator final : public Operator {
 public:
  std::string name() const override { return "ra_reduce_by_key"; }
  std::string description() const override {
    return "Red Fox REDUCE BY KEY: each run of equal consecutive keys as its key and the sum of v0 (modulo "
           "2^32), dense and in input order (the source's local atomics with partition edges merged, or a "
           "segmented scan and compaction of the run ends)";
  }
  std::string kernel_family() const override { return "ra_reduce_by_key"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 2; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
