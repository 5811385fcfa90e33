#include "operators/user/user_run.hpp"

#include <cstring>
#include <map>

#include "base/errors.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/bound_run.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/user/reference_command.hpp"
#include "operators/user/user_kernels.hpp"

namespace varex::operators::user {

namespace {

using harness::DeviceResult;
using harness::RowsOutput;

// An input's elements: uniform over its range from a counter-based generator (any element on any core), or
// its index.
std::vector<std::uint32_t> generate(const BufferDecl& b, std::uint64_t n, std::uint64_t seed,
                                    std::size_t which) {
  std::vector<std::uint32_t> out(n);
  const std::uint64_t stream = datasets::splitmix64(seed ^ (0x9e3779b97f4a7c15ULL * (which + 1)));
  const std::uint64_t span = static_cast<std::uint64_t>(b.high - b.low) + 1;  // at most 2^32
  datasets::parallel_rows(n, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      out[i] = b.iota ? static_cast<std::uint32_t>(i)
                      : static_cast<std::uint32_t>(
                            b.low + static_cast<std::int64_t>(datasets::splitmix64(stream + i) % span));
    }
  });
  return out;
}

class UserRun final : public harness::DecodedRun<UserVariant> {
 public:
  UserRun(const UserOperator& op, Engine& engine, const datasets::WorkloadSpec& spec)
      : op_(op), engine_(engine), spec_(spec), kernels_(engine, op.declared(), op.kernel_family()) {
    const Declaration& d = op.declared();
    std::vector<std::vector<std::uint32_t>> inputs;
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
      inputs.push_back(generate(d.inputs[i], op.elements(d.inputs[i], spec),
                                spec.params.value("seed", std::uint64_t{42}), i));
      const std::uint64_t bytes = std::max<std::uint64_t>(inputs.back().size(), 1) * 4;
      host_.push_back(engine.allocate_host(bytes));
      if (!inputs.back().empty())
        std::memcpy(host_.back()->data(), inputs.back().data(), inputs.back().size() * 4);
      device_.push_back(engine.allocate(bytes));
      bytes_in_ += inputs.back().size() * 4;
    }
    out_elements_ = op.elements(d.output, spec);
    out_ = std::make_unique<RowsOutput>(engine, 1, std::max<std::uint64_t>(out_elements_, 1),
                                        reference_output(d, inputs, spec, out_elements_), /*counted=*/false);
    for (std::size_t i = 0; i < d.inputs.size(); ++i) buffers_[d.inputs[i].name] = device_[i].get();
    buffers_[d.output.name] = &out_->tuple_buffer();
    if (d.output.clear) clears_.push_back({&out_->tuple_buffer(), *d.output.clear, out_elements_ * 4});
    restore_inputs();
  }

  double h2d_ms() const override { return h2d_ms_; }
  void restore_inputs() override {
    h2d_ms_ = 0;
    for (std::size_t i = 0; i < device_.size(); ++i) {
      const std::uint64_t bytes = op_.elements(op_.declared().inputs[i], spec_) * 4;
      if (bytes) h2d_ms_ += engine_.upload(*device_[i], 0, *host_[i], bytes)->elapsed_ms();
    }
  }
  void poison() override { out_->poison(); }
  Collected collect(Check how) override { return harness::collect(*out_, how); }
  Digest reference() const override { return out_->reference(); }
  std::uint64_t bytes_moved() const override { return bytes_in_ + out_elements_ * 4; }
  std::uint64_t working_set_bytes() const override { return bytes_moved() + kernels_.scratch_bytes(); }

 private:
  UserVariant decode(const variants::Params& params) const override {
    return UserVariant(op_.declared(), params, op_.workload_values(spec_));
  }
  CompileInfo compile_variant(const UserVariant& variant) override { return kernels_.compile(variant); }
  ExecutionTimes execute_variant(const UserVariant& variant) override {
    return kernels_.execute(variant, buffers_, clears_);
  }

  const UserOperator& op_;
  Engine& engine_;
  datasets::WorkloadSpec spec_;
  UserKernels kernels_;
  std::vector<std::unique_ptr<HostBuffer>> host_;
  std::vector<std::unique_ptr<DeviceBuffer>> device_;
  std::unique_ptr<RowsOutput> out_;
  std::map<std::string, DeviceBuffer*> buffers_;
  std::vector<Clear> clears_;
  std::uint64_t bytes_in_ = 0, out_elements_ = 0;
  double h2d_ms_ = 0;
};

// On an application's buffers (the runtime library): the inputs in the declared order, each holding its
// elements for the first input's rows (the parameters at their defaults); the output the run's own, handed
// over after each execution.
class UserBound final : public harness::DecodedRun<UserVariant, BoundRun> {
 public:
  UserBound(const UserOperator& op, Engine& engine, const Binding& binding)
      : op_(op), engine_(engine), kernels_(engine, op.declared(), op.kernel_family()) {
    harness::check_binding(op, binding);
    const Declaration& d = op.declared();
    harness::WorkloadOptions options;
    options.flags["rows"] = std::to_string(binding.rows[0]);
    spec_ = op.workload(options);
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
      const std::uint64_t bytes = op.elements(d.inputs[i], spec_) * 4;
      if (binding.inputs[i]->bytes() < bytes)
        throw UsageError(op.name() + ": input '" + d.inputs[i].name + "' holds " +
                         std::to_string(binding.inputs[i]->bytes()) + " bytes, " + std::to_string(bytes) +
                         " are needed");
      buffers_[d.inputs[i].name] = const_cast<DeviceBuffer*>(binding.inputs[i]);  // only read by the kernels
    }
    out_elements_ = op.elements(d.output, spec_);
  }

  datasets::WorkloadClass workload_class() const override { return op_.workload_class(spec_); }

  DeviceResult take_result() override {
    fresh_output();
    DeviceResult result{OutputKind::Rows, {}, out_elements_};
    result.buffers.push_back(std::move(out_));
    result.parts = {{0, 0, out_elements_ * 4, 0}};
    return result;
  }

 private:
  UserVariant decode(const variants::Params& params) const override {
    return UserVariant(op_.declared(), params, op_.workload_values(spec_));
  }
  CompileInfo compile_variant(const UserVariant& variant) override { return kernels_.compile(variant); }
  ExecutionTimes execute_variant(const UserVariant& variant) override {
    fresh_output();
    std::vector<Clear> clears;
    if (op_.declared().output.clear)
      clears.push_back({out_.get(), *op_.declared().output.clear, out_elements_ * 4});
    return kernels_.execute(variant, buffers_, clears);
  }
  void fresh_output() {
    if (out_) return;
    out_ = engine_.allocate(std::max<std::uint64_t>(out_elements_, 1) * 4);
    buffers_[op_.declared().output.name] = out_.get();
  }

  const UserOperator& op_;
  Engine& engine_;
  datasets::WorkloadSpec spec_;
  UserKernels kernels_;
  std::map<std::string, DeviceBuffer*> buffers_;
  std::unique_ptr<DeviceBuffer> out_;
  std::uint64_t out_elements_ = 0;
};

}  // namespace

std::unique_ptr<BoundRun> make_user_bound(const UserOperator& op, Engine& engine, const Binding& binding) {
  return std::make_unique<UserBound>(op, engine, binding);
}

std::unique_ptr<PreparedRun> make_user_run(const UserOperator& op, Engine& engine,
                                           const datasets::WorkloadSpec& spec) {
  return std::make_unique<UserRun>(op, engine, spec);
}

}  // namespace varex::operators::user
