#include "harness/operators/operator.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <memory>
#include <stdexcept>

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "base/text.hpp"
#include "harness/operators/bound_run.hpp"
#include "harness/operators/registry.hpp"

namespace varex::harness {

std::string to_string(OutputKind kind) {
  switch (kind) {
    case OutputKind::Bitmap:
      return "bitmap";
    case OutputKind::Rows:
      return "rows";
    case OutputKind::RowsMultiset:
      return "rows (as a multiset)";
    case OutputKind::Pairs:
      return "pairs of row ids";
    case OutputKind::Groups:
      return "groups";
    case OutputKind::Scalar:
      return "scalar";
  }
  return "?";
}

std::optional<std::string> WorkloadOptions::text(std::string_view flag) const {
  const auto it = flags.find(std::string(flag));
  if (it == flags.end()) return std::nullopt;
  return it->second;
}

std::optional<std::uint64_t> WorkloadOptions::count(std::string_view flag) const {
  const auto t = text(flag);
  if (!t) return std::nullopt;
  return parse_count(*t, "--" + std::string(flag));
}

std::optional<double> WorkloadOptions::number(std::string_view flag) const {
  const auto t = text(flag);
  if (!t) return std::nullopt;
  return parse_double(*t, "--" + std::string(flag));
}

std::uint64_t WorkloadOptions::seed() const {
  const auto t = text("seed");
  if (!t) return 42;
  const std::int64_t v = parse_int(*t, "--seed");
  if (v < 0) throw UsageError("--seed " + *t + " is negative");
  return static_cast<std::uint64_t>(v);
}

std::uint32_t ContractCounter::read() {
  engine_.download(*host_, *device_, 4)->elapsed_ms();
  return *host_->as<std::uint32_t>();
}

std::unique_ptr<BoundRun> Operator::bind(Engine&, const Binding&) const {
  throw UsageError("operator " + name() + " does not run on an application's buffers yet");
}

std::vector<ResultPart> tuple_parts(std::uint64_t rows, std::uint32_t width, std::uint64_t column_stride,
                                    bool ordered, std::size_t buffer) {
  if (column_stride == 0) return {{buffer, 0, rows * width * 4, ordered ? 0u : width * 4}};
  std::vector<ResultPart> parts;
  for (std::uint32_t c = 0; c < width; ++c)
    parts.push_back({buffer, c * column_stride, rows * 4, ordered ? 0u : 4u});
  return parts;
}

void check_binding(const Operator& op, const Binding& binding) {
  const std::vector<InputDecl> inputs = op.declaration().inputs;
  const std::size_t declared = inputs.size();
  const bool repeated = !inputs.empty() && inputs.back().repeated;
  const bool counted = repeated ? binding.inputs.size() >= declared : binding.inputs.size() == declared;
  if (!counted || binding.rows.size() != binding.inputs.size()) {
    throw UsageError(op.name() + " takes " + std::to_string(declared) + (repeated ? " or more" : "") +
                     " input buffer(s), got " + std::to_string(binding.inputs.size()));
  }
  for (std::size_t i = 0; i < binding.inputs.size(); ++i) {
    if (!binding.inputs[i]) {
      throw UsageError(op.name() + ": input " + std::to_string(i) + " (" +
                       inputs[std::min(i, declared - 1)].name + ") is a null buffer");
    }
  }
  WorkloadOptions query;
  query.query = binding.query;
  check_declared(op, query);
}

void check_declared(const Operator& op, const WorkloadOptions& options) {
  const WorkloadDecl decl = op.declaration();
  std::vector<std::string> flags, keys;
  for (const FlagDecl& f : decl.flags) flags.push_back("--" + f.name);
  for (const QueryKeyDecl& q : decl.query) keys.push_back(q.key);
  for (const auto& [name, value] : options.flags) {
    if (std::find(flags.begin(), flags.end(), "--" + name) == flags.end()) {
      throw UsageError("--" + name + " is not a flag of " + op.name() + " (it takes " +
                       (flags.empty() ? std::string("none") : join(flags, ", ")) + ")");
    }
  }
  for (const auto& [key, value] : options.query) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw UsageError("unknown query key '" + key + "' for " + op.name() +
                       " (keys: " + (keys.empty() ? std::string("none") : join(keys, ", ")) + ")");
    }
  }
}

namespace {

struct Installed {
  OperatorRegistry registry;
  std::vector<const Operator*> all;
};

std::unique_ptr<Installed>& installed() {
  static std::unique_ptr<Installed> once;
  return once;
}

}  // namespace

void install_operators(OperatorRegistry registry) {
  auto& slot = installed();
  if (slot) throw std::logic_error("install_operators: the operators are installed already");
  auto made = std::make_unique<Installed>();
  made->registry = std::move(registry);
  for (const auto& op : made->registry.all()) made->all.push_back(op.get());
  slot = std::move(made);
}

const std::vector<const Operator*>& operators() {
  const auto& slot = installed();
  // A binary that forgot varex::operators::install() is a bug of the binary, not the user's mistake.
  if (!slot)
    throw std::logic_error("no operators installed: the binary must call varex::operators::install()");
  return slot->all;
}

const Operator& find_operator(std::string_view name) {
  std::vector<std::string> names;
  for (const Operator* op : operators()) {
    if (op->name() == name) return *op;
    names.push_back(op->name());
  }
  throw UsageError("unknown operator '" + std::string(name) + "' (operators: " + join(names, ", ") + ")");
}

std::optional<datasets::WorkloadClass> workload_class_of(const datasets::WorkloadSpec& spec) {
  for (const Operator* op : operators()) {
    if (op->name() == spec.op) return op->workload_class(spec);
  }
  return std::nullopt;
}

std::optional<datasets::WorkloadSpec> Operator::small_instance(const datasets::WorkloadSpec& spec,
                                                               std::uint64_t divisor) const {
  std::vector<std::string> sizes;  // the flags that count an input's rows, as the spec's parameters
  for (const FlagDecl& f : declaration().flags) {
    if (!f.sizes_input) continue;
    std::string name = f.name;
    std::replace(name.begin(), name.end(), '-', '_');
    sizes.push_back(name);
  }
  return datasets::divide_counts(spec, sizes, divisor);
}

std::optional<SmallInstance> small_instance_for(const Operator& op, const datasets::WorkloadSpec& workload,
                                                const DeviceInfo& device) {
  const std::uint64_t floor = device.cache_bytes ? 4 * device.cache_bytes : kSmallInstanceBytes;
  const std::uint64_t full = op.footprint(workload, device).total;
  for (const std::uint64_t divisor : {16, 8, 4}) {
    std::optional<datasets::WorkloadSpec> small = op.small_instance(workload, divisor);
    if (!small || small->id() == workload.id()) continue;
    const std::uint64_t bytes = op.footprint(*small, device).total;
    // Both are held at once: the small instance is prepared beside the workload.
    if (device.global_mem && full + bytes > device.global_mem / 10 * 9) return std::nullopt;
    if (bytes >= floor) return SmallInstance{std::move(*small), divisor};
  }
  return std::nullopt;
}

variants::Space space_for(const Operator& op, const DeviceInfo& device,
                          const datasets::WorkloadSpec& workload) {
  return op.space({device, workload.rows(), &workload.query});
}

std::vector<datasets::ScaleKey> Operator::scale_keys() const {
  std::vector<datasets::ScaleKey> keys;
  for (const FlagDecl& f : declaration().flags) {
    if (!f.scale) continue;
    std::string name = f.name;
    std::replace(name.begin(), name.end(), '-', '_');
    keys.push_back({name, *f.scale});
  }
  return keys;
}

nlohmann::json Operator::binding_query(const Binding& binding) const {
  nlohmann::json query = nlohmann::json::object();
  for (const auto& [key, value] : binding.query) query[key] = value;
  return query;
}

variants::Space space_for(const Operator& op, const DeviceInfo& device, const Binding& binding) {
  const nlohmann::json query = op.binding_query(binding);
  return op.space({device, binding.rows.empty() ? 0 : binding.rows.front(), &query});
}

variants::Space generic_space(const Operator& op) {
  DeviceInfo generic;
  generic.max_work_group = 1024;
  generic.compute_units = 1;
  return op.space({generic, std::uint64_t{1} << 20});
}

void check_fits(const Operator& op, const datasets::WorkloadSpec& spec, const DeviceInfo& device) {
  const DeviceFootprint need = op.footprint(spec, device);
  if (device.global_mem && need.total > device.global_mem) {
    throw UsageError("input too large: the " + op.name() + " workload needs " + format_bytes(need.total) +
                     " of device memory but " + device.id + " has " + format_bytes(device.global_mem));
  }
  if (device.max_alloc && need.largest > device.max_alloc) {
    throw UsageError("input too large: the " + op.name() + " workload needs a buffer of " +
                     format_bytes(need.largest) + " but " + device.id + " allocates at most " +
                     format_bytes(device.max_alloc));
  }
}

std::string Operator::sources_hash(Backend backend) const {
  return kernel_source(backend, kernel_family()).hash;
}

std::string variant_id(const Operator& op, Backend backend, const variants::Params& params) {
  std::uint64_t h = fnv1a(op.name());
  h = fnv1a("|", h);
  h = fnv1a(to_string(backend), h);
  h = fnv1a("|", h);
  h = fnv1a(variants::canonical(params), h);
  h = fnv1a("|" + op.sources_hash(backend), h);
  return hex64(h);
}

}  // namespace varex::harness
