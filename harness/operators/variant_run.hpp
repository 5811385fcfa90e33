#pragma once
// A variant decoded once. An operator turns a variant's parameters into its own typed bundle in one
// function: the kernels' defines, the launch shapes and its knobs as typed fields. `Operator::defines` and
// the run's compile and execute all take the variant from there, so no method reads string-keyed parameters
// again, and what a kernel is built with is what it is launched with.
#include <optional>
#include <string>
#include <utility>

#include "harness/kernel_source.hpp"
#include "harness/operators/bound_run.hpp"
#include "harness/operators/kernel_sequence.hpp"
#include "harness/operators/vendor_variant.hpp"

namespace varex::harness {

// What every bundle holds. An operator's bundle derives from it, adds its typed knobs and sets `defines`.
struct LaunchBundle {
  LaunchBundle(const variants::Params& params, const DeviceInfo& device)
      : vendor(is_vendor(params)), launch(params, device) {}
  bool vendor;        // impl=cub: the vendor library runs, no program of varex's own
  LaunchPlan launch;  // local size, grid, padding
  Defines defines;    // what the variant's program is built with (unused for a vendor call)
};

// A variant decoded once, whatever the run does with it: compile and execute of one variant decode it once
// (the bundle of the last variant is kept). VariantRun below is the usual run (one program of the family's
// source, a kernel sequence); an operator whose variant builds several programs (the plan's generated
// groups) derives from this directly. `Run` is PreparedRun (varex's own workloads, verified) or BoundRun (an
// application's buffers).
template <class Bundle, class Run = PreparedRun>
class DecodedRun : public Run {
 public:
  CompileInfo compile(const variants::Params& params) final { return compile_variant(decoded(params)); }
  ExecutionTimes execute(const variants::Params& params) final { return execute_variant(decoded(params)); }

 protected:
  // The operator's one function from parameters to its bundle.
  virtual Bundle decode(const variants::Params& params) const = 0;
  virtual CompileInfo compile_variant(const Bundle& bundle) = 0;
  virtual ExecutionTimes execute_variant(const Bundle& bundle) = 0;

  const Bundle& decoded(const variants::Params& params) {
    if (!current_ || current_->first != params) current_.emplace(params, decode(params));
    return current_->second;
  }

 private:
  std::optional<std::pair<variants::Params, Bundle>> current_;
};

// A run over bundles: `decode` makes a variant's bundle (the operator's one function), `run` puts its
// kernels (or its vendor call) into the sequence; the program comes from the engine's cache by its defines.
template <class Bundle, class Run = PreparedRun>
class VariantRun : public DecodedRun<Bundle, Run> {
 public:
  VariantRun(Engine& engine, std::string family) : engine_(engine), family_(std::move(family)) {}

 protected:
  virtual void run(const Bundle& bundle, KernelSequence& seq) = 0;

  Engine& engine_;

 private:
  CompileInfo compile_variant(const Bundle& bundle) final {
    CompileInfo info;
    if (!bundle.vendor) engine_.compile(source(), bundle.defines, &info);
    return info;
  }

  ExecutionTimes execute_variant(const Bundle& bundle) final {
    KernelSequence seq = bundle.vendor ? KernelSequence(engine_)
                                       : KernelSequence(engine_, engine_.compile(source(), bundle.defines));
    run(bundle, seq);
    return seq.times();
  }

  const KernelSource& source() const { return kernel_source(engine_.device().backend, family_); }
  std::string family_;
};

}  // namespace varex::harness
