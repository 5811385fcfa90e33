#pragma once
// A user operator: an operator read from a directory at run time (docs/USER-OPERATORS.md), a built-in
// operator in everything but where it comes from. Its space, workload, kernel and reference are what its
// declaration says; the harness, the tuner, the store and the commands treat it like any other.
#include <filesystem>
#include <vector>

#include "operators/common/toolkit.hpp"
#include "operators/user/declaration.hpp"

namespace varex::operators::user {

class UserOperator final : public Operator {
 public:
  // Registers the kernel's source under kernel_family(); UsageError where it does not resolve.
  explicit UserOperator(Declaration declaration);

  std::string name() const override { return d_.name; }
  std::string description() const override {
    return d_.description + " (user operator, " + d_.dir.string() + ")";
  }
  std::string kernel_family() const override { return "user/" + d_.name; }
  WorkloadDecl declaration() const override;
  variants::Space space(const variants::SpaceContext& context) const override;
  std::string device_refusal(const DeviceInfo& device) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  datasets::WorkloadClass workload_class(const datasets::WorkloadSpec& spec) const override;
  std::optional<datasets::WorkloadSpec> small_instance(const datasets::WorkloadSpec& spec,
                                                       std::uint64_t divisor) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // The inputs as the application's buffers, in the declared order (the first one's rows are the workload's;
  // the parameters at their defaults); the output in a buffer of the run's own.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;

  const Declaration& declared() const { return d_; }
  // The values of the workload's names (Declaration::workload_names: rows, then the parameters).
  std::vector<Value> workload_values(const datasets::WorkloadSpec& spec) const;
  // Elements of a buffer for a workload.
  std::uint64_t elements(const BufferDecl& buffer, const datasets::WorkloadSpec& spec) const;

 private:
  Declaration d_;
};

// The user operators of VAREX_OP_PATH (directories separated by ':'), each entry an operator's directory or a
// directory of them. UsageError for an entry that is neither, or a declaration that does not hold.
std::vector<std::filesystem::path> operator_directories(const std::string& path_list);

}  // namespace varex::operators::user
