#pragma once
// Red Fox SELECT (document 002, sec. 3.2.2): the whole tuple of a relation where a range predicate on the
// key holds, output dense and in input order.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "datasets/relations.hpp"
#include "operators/common/ranges/range_query.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// The selection operator's range predicate (operators/common/ranges/range_query.hpp) on unsigned 32-bit keys.
using KeyRangeQuery = RangeQuery<std::uint32_t>;
using KeyRange = InclusiveRange<std::uint32_t>;

// Host reference: the tuples whose key matches, packed, in input order.
std::vector<std::uint32_t> select_reference(const datasets::Relation& relation, const KeyRangeQuery& query);

class RaSelectOperator final : public Operator {
 public:
  std::string name() const override { return "ra_select"; }
  std::string description() const override {
    return "Red Fox SELECT: the tuples of a key-value relation whose key lies in a range, dense and in input "
           "order (the source's four kernels, or one pass over ordered tiles)";
  }
  std::string kernel_family() const override { return "ra_select"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override { return cache_rows / 2; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
};

}  // namespace varex::operators
