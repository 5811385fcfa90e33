#pragma once
// Ocelot's range selection over one int32 column, producing a bitmap (document 000, sec. 2.2.1, 3.1).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/operators/operator.hpp"

namespace varex::harness {

// The source's predicate: lower and upper bound, each optional and inclusive or exclusive, and negation.
struct SelectionQuery {
  std::optional<std::int32_t> lo;
  std::optional<std::int32_t> hi;
  bool lo_inclusive = true;
  bool hi_inclusive = true;
  bool negate = false;

  // The predicate as the source states it, flag by flag: this is the host reference.
  bool matches(std::int32_t x) const;

  nlohmann::json to_json() const;
  static SelectionQuery from_json(const nlohmann::json& j);
  // From --query keys lo, hi, lo_inclusive, hi_inclusive, negate. Throws UsageError.
  static SelectionQuery parse(const std::map<std::string, std::string>& items);
  // A predicate that selects the fraction `selectivity` of uniformly distributed int32 values.
  static SelectionQuery for_selectivity(double selectivity);
};

// What the kernels evaluate: the inclusive range [lo, hi] (empty when lo > hi), then XOR neg.
struct KernelRange {
  std::int32_t lo;
  std::int32_t hi;
  std::uint32_t neg;
};
KernelRange kernel_range(const SelectionQuery& query);
// The share of uniformly distributed int32 values the query selects.
double uniform_selectivity(const SelectionQuery& query);

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
};

}  // namespace varex::harness
