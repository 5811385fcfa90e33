#pragma once
// A user operator with a built-in operator's contract (docs/USER-OPERATORS.md): the built-in's workloads,
// flags, reference and verification, and one space in which the user's kernels (origin=user, over the
// declaration's tunables) compete with the built-in's own variants and its vendor calls (origin=varex, over
// its tunables). The user's kernels read and write the buffers the built-in's prepared run hands over
// (PreparedRun::contract_buffers), which then checks them as it checks its own.
#include <string>

#include "operators/common/toolkit.hpp"
#include "operators/user/declaration.hpp"

namespace varex::operators::user {

class ContractOperator final : public Operator {
 public:
  // UsageError where a tunable of the declaration is one of the built-in's or `origin`.
  ContractOperator(Declaration declaration, const Operator& base);

  std::string name() const override { return d_.name; }
  std::string description() const override;
  std::string kernel_family() const override { return family_; }
  std::string sources_hash(Backend backend) const override;
  bool moves_all_its_bytes() const override { return base_.moves_all_its_bytes(); }
  WorkloadDecl declaration() const override { return base_.declaration(); }
  variants::Space space(const variants::SpaceContext& context) const override;
  Defines defines(const variants::Params& params, const DeviceInfo& device) const override;
  datasets::WorkloadSpec workload(const WorkloadOptions& options) const override;
  datasets::WorkloadClass workload_class(const datasets::WorkloadSpec& spec) const override;
  std::uint64_t default_rows(std::uint64_t cache_rows) const override {
    return base_.default_rows(cache_rows);
  }
  std::optional<datasets::WorkloadSpec> small_instance(const datasets::WorkloadSpec& spec,
                                                       std::uint64_t divisor) const override;
  DeviceFootprint footprint(const datasets::WorkloadSpec& spec, const DeviceInfo& device) const override;
  std::unique_ptr<PreparedRun> prepare(Engine& engine, const datasets::WorkloadSpec& spec) const override;
  // On an application's buffers as the built-in binds them (docs/RUNTIME.md); the user's kernels on what its
  // bound run hands over.
  std::unique_ptr<BoundRun> bind(Engine& engine, const Binding& binding) const override;
  nlohmann::json binding_query(const Binding& binding) const override;
  nlohmann::json query_plan(const datasets::WorkloadSpec& spec) const override;
  std::optional<double> result_value(const datasets::WorkloadSpec& spec, const Digest& digest) const override;

  const Declaration& declared() const { return d_; }
  // Whether a variant is the user's (origin=user) or the built-in's.
  static bool is_user(const variants::Params& params);
  // A built-in variant's own parameters: without origin and the user's tunables.
  variants::Params base_params(const variants::Params& params) const;

 private:
  datasets::WorkloadSpec as_base(datasets::WorkloadSpec spec) const;
  Declaration d_;
  const Operator& base_;
  std::string family_;
};

}  // namespace varex::operators::user
