#pragma once
// Ocelot's range selection over one int32 column, producing a bitmap (document 000, sec. 2.2.1, 3.1).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operators/common/ranges/range_query.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// The source's predicate on int32 values (operators/common/ranges/range_query.hpp).
using SelectionQuery = RangeQuery<std::int32_t>;
using KernelRange = InclusiveRange<std::int32_t>;

// Host reference: bit r%8 of byte r/8 is set when row r matches; bits past the last row are zero.
std::vector<std::uint8_t> selection_reference(const std::vector<std::int32_t>& column,
                                              const SelectionQuery& query);

class SelectionOperator final : public Operator {
 public:
  std::string name() const override { return "selection"; }
  std::string description() const override {
    return "Ocelot's range selection on an int32 column (lower/upper bound, inclusive flags, negation) "
           "into a bitmap";
  }
  std::string kernel_family() const override { return "selection"; }
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  // Shape: generated or file, and negation; scale: rows and, for generated (uniform) data, the share of
  // values the query selects, whichever way the query was given.
  datasets::WorkloadClass workload_class(const datasets::WorkloadSpec& spec) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
  std::optional<ContractDecl> contract() const override;
};

}  // namespace varex::operators
