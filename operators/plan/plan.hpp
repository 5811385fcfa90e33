#pragma once
// A plan as an operator: its workload is a plan file (or a shipped plan's name) over the generated TPC-H
// tables of a scale factor, its space the tunables of each step with kernels plus the plan's own knobs
// (fusion, residency, host memory), and one execution runs the whole chain on the device with every
// intermediate kept there. So run, sweep, tune, the store, profiles and reports treat a plan as they treat
// any operator, and `varex plan run|sweep|tune PLAN` is their shorthand.
#include <string>

#include "operators/common/toolkit.hpp"
#include "operators/plan/plan_file.hpp"

namespace varex::operators {

// The plan a --plan value names: a shipped plan ("A" … "E", plans/*.json, embedded) or a file. UsageError
// for a file that is missing, not JSON or not a valid plan.
nlohmann::json plan_document(const std::string& name_or_path);
// The names of the shipped plans.
std::vector<std::string> shipped_plans();

class PlanOperator final : public Operator {
 public:
  std::string name() const override { return "plan"; }
  std::string description() const override {
    return "A chain of SELECT, JOIN, arithmetic and PROJECT steps over generated TPC-H tables, run as one, "
           "fused "
           "or step by step (the TPC-H micro-benchmarks of document 002, sec. 4.3)";
  }
  std::string kernel_family() const override { return "plan"; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  // The kernels' defines depend on the group a kernel runs (built while executing): none here.
  Defines defines(const variants::Params&, const DeviceInfo&) const override { return {}; }
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  datasets::WorkloadClass workload_class(const datasets::WorkloadSpec& spec) const override;
  // About one scale factor's lineitem.
  std::uint64_t default_rows(std::uint64_t) const override { return 6000000; }
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  // The same plan at a scale factor `divisor` times smaller.
  std::optional<datasets::WorkloadSpec> small_instance(const datasets::WorkloadSpec& spec,
                                                       std::uint64_t divisor) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's tables (docs/RUNTIME.md): the plan in the query, each scanned column a buffer.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
  nlohmann::json binding_query(const Binding& binding) const override;
  nlohmann::json query_plan(const datasets::WorkloadSpec& spec) const override;
  // `varex plan run|sweep|tune PLAN` and `varex tpch` (plan_commands.cpp).
  std::vector<OperatorCommand> commands() const override;
};

}  // namespace varex::operators
