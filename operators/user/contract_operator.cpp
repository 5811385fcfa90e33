#include "operators/user/contract_operator.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "harness/kernel_source.hpp"
#include "operators/user/user_kernels.hpp"

namespace varex::operators::user {

namespace {

constexpr const char* kOrigin = "origin";

// The built-in's prepared run, whose buffers the user's variants use through its contract.
class ContractRun final : public PreparedRun {
 public:
  ContractRun(const ContractOperator& op, Engine& engine, std::unique_ptr<PreparedRun> base)
      : op_(op), base_(std::move(base)), kernels_(engine, op.declared(), op.kernel_family()) {
    auto contract = base_->contract_buffers();
    if (!contract) throw std::logic_error(op.declared().contract + "'s run hands over no buffers");
    contract_ = std::move(*contract);
    for (const std::string& name : op.declared().workload_names)
      workload_.push_back(contract_.scalars.at(name));
    for (DeviceBuffer* b : contract_.zeroed) zeroed_.push_back({b, 0, b->bytes()});
  }

  double h2d_ms() const override { return base_->h2d_ms(); }
  void restore_inputs() override { base_->restore_inputs(); }
  CompileInfo compile(const variants::Params& params) override {
    if (!ContractOperator::is_user(params)) return base_->compile(op_.base_params(params));
    return kernels_.compile(decoded(params).defines);
  }
  void poison() override { base_->poison(); }
  ExecutionTimes execute(const variants::Params& params) override {
    if (!ContractOperator::is_user(params)) return base_->execute(op_.base_params(params));
    ExecutionTimes times = kernels_.execute(decoded(params), contract_.buffers, zeroed_);
    if (contract_.finish) contract_.finish();
    return times;
  }
  Collected collect(Check how) override { return base_->collect(how); }
  Digest reference() const override { return base_->reference(); }
  std::uint64_t bytes_moved() const override { return base_->bytes_moved(); }
  std::uint64_t working_set_bytes() const override {
    return base_->working_set_bytes() + kernels_.scratch_bytes();
  }
  std::optional<BaselineTiming> time_baseline() override { return base_->time_baseline(); }

 private:
  const UserVariant& decoded(const variants::Params& params) {
    if (!current_ || current_->first != params)
      current_.emplace(params, UserVariant(op_.declared(), params, workload_));
    return current_->second;
  }

  const ContractOperator& op_;
  std::unique_ptr<PreparedRun> base_;
  ContractBuffers contract_;
  std::vector<Value> workload_;  // the contract's scalars, in the declaration's order
  std::vector<Clear> zeroed_;
  UserKernels kernels_;
  std::optional<std::pair<variants::Params, UserVariant>> current_;
};

// The same on an application's buffers (the runtime library): the built-in's bound run, whose buffers the
// user's variants use for each execution (they change as results are handed over); where the output did
// not fit, the user's kernels run again on the grown buffers, and the call's time holds both runs.
class ContractBound final : public harness::BoundRun {
 public:
  ContractBound(const ContractOperator& op, Engine& engine, std::unique_ptr<harness::BoundRun> base)
      : op_(op), base_(std::move(base)), kernels_(engine, op.declared(), op.kernel_family()) {}

  datasets::WorkloadClass workload_class() const override { return base_->workload_class(); }
  std::string refuses(const variants::Params& params) const override {
    return ContractOperator::is_user(params) ? std::string() : base_->refuses(op_.base_params(params));
  }
  std::map<std::string, std::string> fixed() const override { return base_->fixed(); }
  CompileInfo compile(const variants::Params& params) override {
    if (!ContractOperator::is_user(params)) return base_->compile(op_.base_params(params));
    return kernels_.compile(user_defines(op_.declared(), params));
  }
  ExecutionTimes execute(const variants::Params& params) override {
    if (!ContractOperator::is_user(params)) return base_->execute(op_.base_params(params));
    ExecutionTimes times;
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto contract = base_->contract_buffers();
      if (!contract)
        throw UsageError(op_.name() + ": the runtime library does not yet run a user's kernels with " +
                         op_.declared().contract + "'s contract (" + op_.declared().contract +
                         "'s own variants run there: origin=varex)");
      // Sized first and assigned: g++ 12 at -O2 takes a vector of variants grown by push_back for a read of
      // an uninitialised string (-Wmaybe-uninitialized).
      const std::vector<std::string>& names = op_.declared().workload_names;
      std::vector<Value> workload(names.size());
      for (std::size_t i = 0; i < names.size(); ++i) workload[i] = contract->scalars.at(names[i]);
      std::vector<Clear> zeroed;
      for (DeviceBuffer* b : contract->zeroed) zeroed.push_back({b, 0, b->bytes()});
      const ExecutionTimes run =
          kernels_.execute(UserVariant(op_.declared(), params, workload), contract->buffers, zeroed);
      times.total_ms += run.total_ms;
      times.kernels.insert(times.kernels.end(), run.kernels.begin(), run.kernels.end());
      if (!contract->finish || contract->finish()) return times;
    }
    throw LaunchError(op_.name() + ": the user's kernels wrote fewer results than they counted twice");
  }
  harness::DeviceResult take_result() override { return base_->take_result(); }

 private:
  const ContractOperator& op_;
  std::unique_ptr<harness::BoundRun> base_;
  UserKernels kernels_;
};

}  // namespace

ContractOperator::ContractOperator(Declaration declaration, const Operator& base)
    : d_(std::move(declaration)), base_(base) {
  const variants::Space generic = harness::generic_space(base_);
  for (const TunableDecl& t : d_.tunables) {
    const bool taken =
        t.name == kOrigin || std::any_of(generic.tunables().begin(), generic.tunables().end(),
                                         [&](const variants::Tunable& b) { return b.name == t.name; });
    if (taken)
      throw UsageError((d_.dir / "operator.json").string() + ": 'tunables." + t.name + "': " + base_.name() +
                       " has a tunable of that name (or it is origin, which says whose a variant is)");
  }
  family_ = add_user_source(d_);
}

std::string ContractOperator::description() const {
  return d_.description + " (user operator with " + base_.name() + "'s contract, " + d_.dir.string() + ")";
}

std::string ContractOperator::sources_hash(Backend backend) const {
  return hex64(fnv1a(harness::kernel_source(backend, family_).hash + "|" + base_.sources_hash(backend)));
}

bool ContractOperator::is_user(const variants::Params& params) {
  const auto it = params.find(kOrigin);
  return it == params.end() || it->second == Value{"user"};
}

variants::Params ContractOperator::base_params(const variants::Params& params) const {
  variants::Params out = params;
  out.erase(kOrigin);
  for (const TunableDecl& t : d_.tunables) out.erase(t.name);
  return out;
}

variants::Space ContractOperator::space(const variants::SpaceContext& context) const {
  const variants::Space base = base_.space(context);
  std::vector<variants::Tunable> tunables{
      {kOrigin,
       variants::TunableKind::Compile,
       {Value{"user"}, Value{"varex"}},
       Value{"user"},
       "user: the kernels of " + d_.dir.string() + "; varex: " + base_.name() + "'s own variants"}};
  std::vector<std::string> base_names, user_names;
  for (const variants::Tunable& t : base.tunables()) {
    tunables.push_back(t);
    base_names.push_back(t.name);
  }
  for (variants::Tunable& t : user_tunables(d_)) {
    user_names.push_back(t.name);
    tunables.push_back(std::move(t));
  }
  // Each side's constraints bind its own variants only.
  std::vector<variants::Constraint> constraints;
  for (const variants::Constraint& c : base.constraints())
    constraints.push_back(
        {c.description, [c](const variants::Params& p) { return is_user(p) || c.holds(p); }});
  for (const variants::Constraint& c : user_constraints(d_, context.device))
    constraints.push_back(
        {c.description, [c](const variants::Params& p) { return !is_user(p) || c.holds(p); }});
  std::vector<variants::Inactive> inactive;
  for (const variants::Inactive& i : base.inactive())
    inactive.push_back(
        {i.description, [i](const variants::Params& p) { return !is_user(p) && i.when(p); }, i.tunables});
  inactive.push_back(
      {"the user's kernels read none of " + base_.name() + "'s tunables", is_user, base_names, {kOrigin}});
  inactive.push_back({base_.name() + "'s variants read none of the user's tunables",
                      [](const variants::Params& p) { return !is_user(p); },
                      user_names,
                      {kOrigin}});
  return variants::Space(d_.name, std::move(tunables), std::move(constraints), std::move(inactive));
}

Defines ContractOperator::defines(const variants::Params& params, const DeviceInfo& device) const {
  return is_user(params) ? user_defines(d_, params) : base_.defines(base_params(params), device);
}

datasets::WorkloadSpec ContractOperator::as_base(datasets::WorkloadSpec spec) const {
  spec.op = base_.name();
  return spec;
}

datasets::WorkloadSpec ContractOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec = base_.workload(options);
  spec.op = name();
  return spec;
}

datasets::WorkloadClass ContractOperator::workload_class(const datasets::WorkloadSpec& spec) const {
  return base_.workload_class(as_base(spec));
}

std::optional<datasets::WorkloadSpec> ContractOperator::small_instance(const datasets::WorkloadSpec& spec,
                                                                       std::uint64_t divisor) const {
  auto small = base_.small_instance(as_base(spec), divisor);
  if (small) small->op = name();
  return small;
}

DeviceFootprint ContractOperator::footprint(const datasets::WorkloadSpec& spec,
                                            const DeviceInfo& device) const {
  return base_.footprint(as_base(spec), device);
}

std::unique_ptr<BoundRun> ContractOperator::bind(Engine& engine, const Binding& binding) const {
  return std::make_unique<ContractBound>(*this, engine, base_.bind(engine, binding));
}

nlohmann::json ContractOperator::binding_query(const Binding& binding) const {
  return base_.binding_query(binding);
}

std::unique_ptr<PreparedRun> ContractOperator::prepare(Engine& engine,
                                                       const datasets::WorkloadSpec& spec) const {
  return std::make_unique<ContractRun>(*this, engine, base_.prepare(engine, as_base(spec)));
}

nlohmann::json ContractOperator::query_plan(const datasets::WorkloadSpec& spec) const {
  return base_.query_plan(as_base(spec));
}

std::optional<double> ContractOperator::result_value(const datasets::WorkloadSpec& spec,
                                                     const Digest& digest) const {
  return base_.result_value(as_base(spec), digest);
}

}  // namespace varex::operators::user
