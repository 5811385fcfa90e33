#pragma once
// The string operators of document 003: str_equal, str_prefix, str_like and regex over an Arrow string
// column, each producing the bitmap of matching rows, with naive and lane-refill kernels
// (kernels/*/strings.*).
#include <string>

#include "operators/common/toolkit.hpp"
#include "operators/strings/string_reference.hpp"

namespace varex::operators {

class StringOperator final : public Operator {
 public:
  explicit StringOperator(StringOp op) : op_(op) {}
  std::string name() const override;
  std::string description() const override;
  std::string kernel_family() const override { return "strings"; }
  bool moves_all_its_bytes() const override { return false; }  // a comparison stops at a mismatch
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  // Query keys: value (str_equal), prefix (str_prefix), pattern (str_like, regex). Generated columns
  // (--strings ptype|pname|titles, --rows, --selectivity, --plant) default the query to the plant.
  WorkloadDecl declaration() const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override;  // an eighth: rows are wider
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's column: one buffer holding the rows + 1 int32 offsets and then the bytes, the offsets
  // counting from the buffer's start (or, where the declaration names two inputs, the offsets and the bytes
  // as buffers of their own); the query's operand key is required. The bitmap of whole 32-bit words.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
  // str_like and regex: the automaton's states, byte classes and the size of both layouts.
  nlohmann::json query_plan(const datasets::WorkloadSpec& spec) const override;

  StringOp op() const { return op_; }
  // The query key of the operand: value, prefix or pattern.
  std::string operand_key() const;

 private:
  StringOp op_;
};

}  // namespace varex::operators
