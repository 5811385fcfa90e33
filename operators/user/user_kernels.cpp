#include "operators/user/user_kernels.hpp"

#include <algorithm>
#include <limits>

#include "base/errors.hpp"
#include "harness/kernel_source.hpp"
#include "harness/operators/kernel_sequence.hpp"

namespace varex::operators::user {

namespace {

using harness::KernelSequence;

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

UserVariant::Launch launch_of(const Declaration& d, const KernelDecl& k, const std::vector<Value>& values) {
  const std::int64_t global = k.global.integer(values);
  const std::int64_t local = k.local.integer(values);
  if (global < 0 || local < 0)
    throw UsageError(d.name + ": kernel " + k.name + " has a negative launch size (" + k.global.text() +
                     ", " + k.local.text() + ")");
  UserVariant::Launch out;
  out.shape.local = static_cast<std::uint64_t>(local);
  out.shape.global = local ? harness::round_up(static_cast<std::uint64_t>(global), out.shape.local)
                           : static_cast<std::uint64_t>(global);
  for (const ArgDecl& a : k.args)
    out.scalars.push_back(a.value ? scalar(*a.value, a.type, values) : KernelArg{});
  return out;
}

}  // namespace

std::string add_user_source(const Declaration& d) {
  const std::string family = "user/" + d.name;
  try {
    harness::add_kernel_source(family, d.source_text, d.source_file);
  } catch (const std::logic_error& e) {
    throw UsageError((d.dir / d.source_file).string() + ": " + e.what() +
                     " (a kernel includes only varex's headers, such as \"common/portable.h\")");
  }
  return family;
}

std::vector<variants::Tunable> user_tunables(const Declaration& d) {
  std::vector<variants::Tunable> out;
  for (const TunableDecl& t : d.tunables) {
    out.push_back({t.name, t.compile ? variants::TunableKind::Compile : variants::TunableKind::Launch,
                   t.values, t.default_value, t.help});
  }
  return out;
}

std::string language_refusal(const Declaration& d, const DeviceInfo& device) {
  if (d.language != Language::Cuda || device.backend == Backend::Cuda || device.id.empty()) return {};
  return d.name + "'s kernels are CUDA C++ (" + d.source_file + "): they run on CUDA devices only, not " +
         device.id;
}

std::vector<variants::Constraint> user_constraints(const Declaration& d, const DeviceInfo& device) {
  std::vector<variants::Constraint> out;
  if (std::string why = language_refusal(d, device); !why.empty())
    out.push_back({why, [](const variants::Params&) { return false; }});
  for (const Expression& c : d.constraints) {
    out.push_back({"constraint '" + c.text() + "' does not hold",
                   [&d, c](const variants::Params& p) { return c.truth(tunable_values(d, &p)); }});
  }
  return out;
}

std::vector<Value> tunable_values(const Declaration& d, const variants::Params* params) {
  std::vector<Value> out;
  out.reserve(d.tunables.size());
  for (const TunableDecl& t : d.tunables) out.push_back(params ? params->at(t.name) : t.default_value);
  return out;
}

Defines user_defines(const Declaration& d, const variants::Params& params) {
  Defines out;
  const std::vector<Value> tunables = tunable_values(d, &params);
  for (std::size_t i = 0; i < d.tunables.size(); ++i) {
    if (d.tunables[i].compile) out.push_back({d.tunables[i].name, variants::to_string(tunables[i])});
  }
  for (const DefineDecl& define : d.defines)
    out.push_back({define.name, variants::to_string(define.value.evaluate(tunables))});
  return out;
}

UserVariant::UserVariant(const Declaration& d, const variants::Params& params,
                         const std::vector<Value>& workload) {
  std::vector<Value> values = tunable_values(d, &params);
  values.insert(values.end(), workload.begin(), workload.end());
  try {
    defines = user_defines(d, params);
    for (const KernelDecl& k : d.kernels) launches.push_back(launch_of(d, k, values));
    for (const BufferDecl& b : d.scratch) {
      const std::int64_t n = b.count.integer(values);
      if (n < 0 || n > std::numeric_limits<std::int32_t>::max())
        throw UsageError("scratch buffer '" + b.name + "' would hold " + std::to_string(n) + " elements (" +
                         b.count.text() + "); at most 2^31 - 1");
      scratch.push_back(static_cast<std::uint64_t>(n));
    }
  } catch (const UsageError& e) {
    throw LaunchError(e.what());
  }
}

const harness::KernelSource& UserKernels::source() const {
  return harness::kernel_source(engine_.device().backend, family_);
}

CompileInfo UserKernels::compile(const Defines& defines) {
  CompileInfo info;
  engine_.compile(source(), defines, &info);
  return info;
}

ExecutionTimes UserKernels::execute(const UserVariant& variant,
                                    const std::map<std::string, DeviceBuffer*>& buffers,
                                    const std::vector<Clear>& clears) {
  scratch_.resize(d_.scratch.size());
  std::map<std::string, DeviceBuffer*> named = buffers;
  for (std::size_t s = 0; s < d_.scratch.size(); ++s) {
    const std::uint64_t bytes = std::max<std::uint64_t>(variant.scratch[s], 1) * 4;
    if (!scratch_[s] || scratch_[s]->bytes() < bytes) {
      scratch_[s].reset();
      scratch_[s] = engine_.allocate(bytes);
    }
    named[d_.scratch[s].name] = scratch_[s].get();
  }
  KernelSequence seq(engine_, engine_.compile(source(), variant.defines));
  for (const Clear& c : clears) {
    if (c.bytes) seq.fill("clear", *c.buffer, c.word, c.bytes);
  }
  for (std::size_t s = 0; s < d_.scratch.size(); ++s) {
    if (d_.scratch[s].clear && variant.scratch[s])
      seq.fill("clear", *scratch_[s], *d_.scratch[s].clear, variant.scratch[s] * 4);
  }
  for (std::size_t k = 0; k < d_.kernels.size(); ++k) {
    const KernelDecl& kernel = d_.kernels[k];
    std::vector<KernelArg> args = variant.launches[k].scalars;
    for (std::size_t a = 0; a < kernel.args.size(); ++a) {
      if (!kernel.args[a].buffer.empty()) args[a] = KernelArg::of(*named.at(kernel.args[a].buffer));
    }
    seq.run(kernel.name, kernel.name, variant.launches[k].shape, args);
  }
  return seq.times();
}

std::uint64_t UserKernels::scratch_bytes() const {
  std::uint64_t bytes = 0;
  for (const auto& s : scratch_) bytes += s ? s->bytes() : 0;
  return bytes;
}

}  // namespace varex::operators::user
