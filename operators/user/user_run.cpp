#include "operators/user/user_run.hpp"

#include <cstring>
#include <map>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/bound_run.hpp"
#include "harness/operators/variant_run.hpp"
#include "operators/user/reference.hpp"
#include "operators/user/user_kernels.hpp"
#include "operators/user/user_outputs.hpp"

namespace varex::operators::user {

namespace {

using harness::DeviceResult;

std::uint32_t float_bits(float f) {
  std::uint32_t w;
  std::memcpy(&w, &f, 4);
  return w;
}

// An input's elements: uniform over its range from a counter-based generator (any element on any core), or
// its index.
std::vector<std::uint32_t> generate(const BufferDecl& b, std::uint64_t n, std::uint64_t seed,
                                    std::size_t which) {
  std::vector<std::uint32_t> out(n);
  const std::uint64_t stream = datasets::splitmix64(seed ^ (0x9e3779b97f4a7c15ULL * (which + 1)));
  const std::uint64_t span = static_cast<std::uint64_t>(b.high - b.low) + 1;  // at most 2^32
  const bool real = b.type == ElementType::Float32;
  datasets::parallel_rows(n, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      const std::uint64_t r = datasets::splitmix64(stream + i);
      if (real) {
        // 24 random bits: a float's mantissa, so that every value drawn is one a float holds.
        const double u = static_cast<double>(r >> 40) / static_cast<double>(1 << 24);
        out[i] = float_bits(b.iota ? static_cast<float>(i)
                                   : static_cast<float>(b.low_real + u * (b.high_real - b.low_real)));
      } else {
        out[i] = b.iota ? static_cast<std::uint32_t>(i)
                        : static_cast<std::uint32_t>(b.low + static_cast<std::int64_t>(r % span));
      }
    }
  });
  return out;
}

// An input of the workload: read from the file --input named for it, or generated.
std::vector<std::uint32_t> input_words(const UserOperator& op, const datasets::WorkloadSpec& spec,
                                       std::size_t i) {
  const BufferDecl& b = op.declared().inputs[i];
  const std::uint64_t n = op.elements(b, spec);
  if (!spec.params.contains("files") || !spec.params["files"].contains(b.name))
    return generate(b, n, spec.params.value("seed", std::uint64_t{42}), i);
  const nlohmann::json& file = spec.params["files"][b.name];
  const std::string path = bytes_from_json(file.at("path"));
  const std::string bytes = datasets::read_input_file(path);
  if (bytes.size() != n * 4 || datasets::file_fingerprint(path) != file.at("fingerprint").get<std::string>())
    throw UsageError("input file " + path + " changed while varex was running");
  std::vector<std::uint32_t> words(n);
  if (n) std::memcpy(words.data(), bytes.data(), n * 4);
  return words;
}

// What the prepared and the bound run share: the operator, its workload, its kernels, and a variant decoded
// and compiled one way.
template <class Run>
class UserKernelsRun : public harness::DecodedRun<UserVariant, Run> {
 protected:
  UserKernelsRun(const UserOperator& op, Engine& engine, datasets::WorkloadSpec spec)
      : op_(op),
        engine_(engine),
        spec_(std::move(spec)),
        kernels_(engine, op.declared(), op.kernel_family()) {}

  UserVariant decode(const variants::Params& params) const override {
    return UserVariant(op_.declared(), params, op_.workload_values(spec_));
  }
  CompileInfo compile_variant(const UserVariant& variant) override {
    return kernels_.compile(variant.defines);
  }

  const UserOperator& op_;
  Engine& engine_;
  datasets::WorkloadSpec spec_;
  UserKernels kernels_;
};

class UserRun final : public UserKernelsRun<PreparedRun> {
 public:
  UserRun(const UserOperator& op, Engine& engine, const datasets::WorkloadSpec& spec)
      : UserKernelsRun(op, engine, spec) {
    const Declaration& d = op.declared();
    std::vector<std::vector<std::uint32_t>> inputs;
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
      inputs.push_back(input_words(op, spec, i));
      const std::uint64_t bytes = std::max<std::uint64_t>(inputs.back().size(), 1) * 4;
      host_.push_back(engine.allocate_host(bytes));
      if (!inputs.back().empty())
        std::memcpy(host_.back()->data(), inputs.back().data(), inputs.back().size() * 4);
      device_.push_back(engine.allocate(bytes));
      bytes_in_ += inputs.back().size() * 4;
    }
    std::vector<std::uint64_t> out_elements;
    for (const BufferDecl& o : d.outputs) out_elements.push_back(op.elements(o, spec));
    out_ = std::make_unique<UserOutputs>(
        engine, d.outputs, reference_outputs(d, inputs, spec, op.workload_values(spec), out_elements));
    for (std::size_t i = 0; i < d.inputs.size(); ++i) buffers_[d.inputs[i].name] = device_[i].get();
    for (std::size_t o = 0; o < d.outputs.size(); ++o) {
      buffers_[d.outputs[o].name] = &out_->buffer(o);
      if (d.outputs[o].clear) clears_.push_back({&out_->buffer(o), *d.outputs[o].clear, out_elements[o] * 4});
      bytes_out_ += out_elements[o] * 4;
    }
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
  std::uint64_t bytes_moved() const override { return bytes_in_ + bytes_out_; }
  std::uint64_t working_set_bytes() const override { return bytes_moved() + kernels_.scratch_bytes(); }

 private:
  ExecutionTimes execute_variant(const UserVariant& variant) override {
    return kernels_.execute(variant, buffers_, clears_);
  }

  std::vector<std::unique_ptr<HostBuffer>> host_;
  std::vector<std::unique_ptr<DeviceBuffer>> device_;
  std::unique_ptr<UserOutputs> out_;
  std::map<std::string, DeviceBuffer*> buffers_;
  std::vector<Clear> clears_;
  std::uint64_t bytes_in_ = 0, bytes_out_ = 0;
  double h2d_ms_ = 0;
};

// On an application's buffers (the runtime library): the inputs in the declared order, each holding its
// elements for the first input's rows (the parameters at their defaults); the outputs the run's own, one
// buffer each in the declared order, handed over after each execution.
class UserBound final : public UserKernelsRun<BoundRun> {
 public:
  UserBound(const UserOperator& op, Engine& engine, const Binding& binding)
      : UserKernelsRun(op, engine, bound_workload(op, binding)) {
    const Declaration& d = op.declared();
    for (std::size_t i = 0; i < d.inputs.size(); ++i) {
      const std::uint64_t bytes = op.elements(d.inputs[i], spec_) * 4;
      if (binding.inputs[i]->bytes() < bytes)
        throw UsageError(op.name() + ": input '" + d.inputs[i].name + "' holds " +
                         std::to_string(binding.inputs[i]->bytes()) + " bytes, " + std::to_string(bytes) +
                         " are needed");
      buffers_[d.inputs[i].name] = const_cast<DeviceBuffer*>(binding.inputs[i]);  // only read by the kernels
    }
    for (const BufferDecl& o : d.outputs) out_elements_.push_back(op.elements(o, spec_));
  }

  datasets::WorkloadClass workload_class() const override { return op_.workload_class(spec_); }

  DeviceResult take_result() override {
    fresh_outputs();
    DeviceResult result{OutputKind::Rows, std::move(out_), out_elements_.front()};
    out_.clear();  // the next execution writes buffers of its own
    for (std::size_t o = 0; o < out_elements_.size(); ++o)
      result.parts.push_back({o, 0, out_elements_[o] * 4, 0});
    return result;
  }

 private:
  // The workload a call on `binding` stands for: the first input's rows, the parameters at their defaults.
  static datasets::WorkloadSpec bound_workload(const UserOperator& op, const Binding& binding) {
    harness::check_binding(op, binding);
    harness::WorkloadOptions options;
    options.flags["rows"] = std::to_string(binding.rows[0]);
    return op.workload(options);
  }

  ExecutionTimes execute_variant(const UserVariant& variant) override {
    fresh_outputs();
    std::vector<Clear> clears;
    const std::vector<BufferDecl>& outputs = op_.declared().outputs;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      if (outputs[o].clear) clears.push_back({out_[o].get(), *outputs[o].clear, out_elements_[o] * 4});
    }
    return kernels_.execute(variant, buffers_, clears);
  }
  void fresh_outputs() {
    if (!out_.empty()) return;
    const std::vector<BufferDecl>& outputs = op_.declared().outputs;
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      out_.push_back(engine_.allocate(std::max<std::uint64_t>(out_elements_[o], 1) * 4));
      buffers_[outputs[o].name] = out_.back().get();
    }
  }

  std::map<std::string, DeviceBuffer*> buffers_;
  std::vector<std::unique_ptr<DeviceBuffer>> out_;
  std::vector<std::uint64_t> out_elements_;
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
