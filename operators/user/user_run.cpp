#include "operators/user/user_run.hpp"

#include <cstring>
#include <limits>

#include "base/errors.hpp"
#include "datasets/int_columns.hpp"
#include "harness/operators/variant_run.hpp"
#include "harness/outputs/rows.hpp"
#include "operators/user/reference_command.hpp"

namespace varex::operators::user {

namespace {

using harness::KernelSequence;
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

KernelArg scalar(const Expression& e, ArgDecl::Type type, const std::vector<Value>& values) {
  const std::int64_t v = e.integer(values);
  const auto out_of = [&](const char* name) {
    return UsageError("kernel argument '" + e.text() + "' is " + std::to_string(v) + ", out of " + name +
                      "'s range");
  };
  switch (type) {
    case ArgDecl::Type::Int:
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
        throw out_of("int");
      return KernelArg::of(static_cast<std::int32_t>(v));
    case ArgDecl::Type::Uint:
      if (v < 0 || v > std::numeric_limits<std::uint32_t>::max()) throw out_of("uint");
      return KernelArg::of(static_cast<std::uint32_t>(v));
    case ArgDecl::Type::Long:
      return KernelArg::of(v);
    case ArgDecl::Type::Ulong:
      if (v < 0) throw out_of("ulong");
      return KernelArg::of(static_cast<std::uint64_t>(v));
  }
  throw std::logic_error("unknown argument type");
}

// A variant decoded once: its defines, its launch shape and its scalar arguments. A variant whose geometry or
// arguments cannot be computed (a division by zero, a value out of its type's range) fails to launch: one
// failed measurement, and the session goes on.
struct UserVariant : harness::LaunchBundle {
  UserVariant(const UserOperator& op, const variants::Params& params, const datasets::WorkloadSpec& spec,
              const DeviceInfo& device)
      : LaunchBundle(variants::Params{}, device) {  // the declaration's geometry, not varex's launch tunables
    try {
      decode(op, params, spec, device);
    } catch (const UsageError& e) {
      throw LaunchError(e.what());
    }
  }
  LaunchShape shape;
  std::vector<KernelArg> scalars;  // per argument; a buffer's is filled in by the run

 private:
  void decode(const UserOperator& op, const variants::Params& params, const datasets::WorkloadSpec& spec,
              const DeviceInfo& device) {
    const Declaration& d = op.declared();
    const std::vector<Value> values = op.values(&params, spec);
    const std::int64_t global = d.kernel.global.integer(values);
    const std::int64_t local = d.kernel.local.integer(values);
    if (global < 0 || local < 0)
      throw UsageError(d.name + ": a negative launch size (" + d.kernel.global.text() + ", " +
                       d.kernel.local.text() + ")");
    shape.local = static_cast<std::uint64_t>(local);
    shape.global = local ? harness::round_up(static_cast<std::uint64_t>(global), shape.local)
                         : static_cast<std::uint64_t>(global);
    for (const ArgDecl& a : d.kernel.args)
      scalars.push_back(a.value ? scalar(*a.value, a.type, values) : KernelArg{});
    defines = op.defines(params, device);
  }
};

class UserRun final : public harness::VariantRun<UserVariant> {
 public:
  UserRun(const UserOperator& op, Engine& engine, const datasets::WorkloadSpec& spec)
      : VariantRun(engine, op.kernel_family()), op_(op), spec_(spec) {
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
  std::uint64_t working_set_bytes() const override { return bytes_moved(); }

 private:
  UserVariant decode(const variants::Params& params) const override {
    return UserVariant(op_, params, spec_, engine_.device());
  }

  void run(const UserVariant& variant, KernelSequence& seq) override {
    const Declaration& d = op_.declared();
    if (d.output.clear && out_elements_)
      seq.fill("clear", out_->tuple_buffer(), *d.output.clear, out_elements_ * 4);
    std::vector<KernelArg> args = variant.scalars;
    for (std::size_t a = 0; a < d.kernel.args.size(); ++a) {
      const std::string& buffer = d.kernel.args[a].buffer;
      if (buffer.empty()) continue;
      if (buffer == d.output.name) {
        args[a] = KernelArg::of(out_->tuple_buffer());
        continue;
      }
      for (std::size_t i = 0; i < d.inputs.size(); ++i) {
        if (d.inputs[i].name == buffer) args[a] = KernelArg::of(*device_[i]);
      }
    }
    seq.run(d.kernel.name, d.kernel.name, variant.shape, args);
  }

  const UserOperator& op_;
  datasets::WorkloadSpec spec_;
  std::vector<std::unique_ptr<HostBuffer>> host_;
  std::vector<std::unique_ptr<DeviceBuffer>> device_;
  std::unique_ptr<RowsOutput> out_;
  std::uint64_t bytes_in_ = 0, out_elements_ = 0;
  double h2d_ms_ = 0;
};

}  // namespace

std::unique_ptr<PreparedRun> make_user_run(const UserOperator& op, Engine& engine,
                                           const datasets::WorkloadSpec& spec) {
  return std::make_unique<UserRun>(op, engine, spec);
}

}  // namespace varex::operators::user
