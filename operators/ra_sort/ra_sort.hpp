#pragma once
// Red Fox SORT (document 002, sec. 3.2.6): a relation's tuples in ascending order of the key, then of the
// values (v0, v1, v2: the whole tuple lexicographically), stable, dense.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datasets/relations.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// Host reference: the tuples as packed tuples, std::stable_sort'ed lexicographically.
std::vector<std::uint32_t> sort_reference(const datasets::Relation& relation);

class RaSortOperator final : public Operator {
 public:
  std::string name() const override { return "ra_sort"; }
  std::string description() const override {
    return "Red Fox SORT: the tuples of a key-value relation by key, then by value, stable and dense (the "
           "source's merge sort: tiles sorted in local memory, then merge-path passes; or an LSD radix sort)";
  }
  std::string kernel_family() const override { return "ra_sort"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 2; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
