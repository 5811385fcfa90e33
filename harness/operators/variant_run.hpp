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

// A run over bundles: `decode` makes a variant's bundle (the operator's one function), `run` puts its
// kernels (or its vendor call) into the sequence. The bundle of the last variant is kept, so compile and
// execute of one variant decode it once; the program comes from the engine's cache by its defines. `Run` is
// PreparedRun (varex's own workloads, verified) or BoundRun (an application's buffers).
template <class Bundle, class Run = PreparedRun>
class VariantRun : public Run {
 public:
  VariantRun(Engine& engine, std::string family) : engine_(engine), family_(std::move(family)) {}

  CompileInfo compile(const variants::Params& params) final {
    CompileInfo info;
    const Bundle& bundle = decoded(params);
    if (!bundle.vendor) engine_.compile(source(), bundle.defines, &info);
    return info;
  }

  ExecutionTimes execute(const variants::Params& params) final {
    const Bundle& bundle = decoded(params);
    KernelSequence seq = bundle.vendor ? KernelSequence(engine_)
                                       : KernelSequence(engine_, engine_.compile(source(), bundle.defines));
    run(bundle, seq);
    return seq.times();
  }

 protected:
  virtual Bundle decode(const variants::Params& params) const = 0;
  virtual void run(const Bundle& bundle, KernelSequence& seq) = 0;

  const Bundle& decoded(const variants::Params& params) {
    if (!current_ || current_->first != params) current_.emplace(params, decode(params));
    return current_->second;
  }

  Engine& engine_;

 private:
  const KernelSource& source() const { return kernel_source(engine_.device().backend, family_); }
  std::string family_;
  std::optional<std::pair<variants::Params, Bundle>> current_;
};

}  // namespace varex::harness
