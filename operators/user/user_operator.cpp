#include "operators/user/user_operator.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/int_columns.hpp"
#include "harness/kernel_source.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/workload_flags.hpp"
#include "operators/user/reference_command.hpp"
#include "operators/user/user_run.hpp"

namespace varex::operators::user {

namespace {

namespace flags = harness::flags;

std::string type_name(ElementType type) {
  return type == ElementType::Int32 ? "int32" : "uint32";
}

}  // namespace

UserOperator::UserOperator(Declaration declaration) : d_(std::move(declaration)) {
  try {
    harness::add_kernel_source(kernel_family(), d_.kernel.text);
  } catch (const std::logic_error& e) {
    throw UsageError((d_.dir / d_.kernel.file).string() + ": " + e.what() +
                     " (a kernel includes only varex's headers, such as \"common/portable.h\")");
  }
}

WorkloadDecl UserOperator::declaration() const {
  WorkloadDecl w;
  for (const BufferDecl& b : d_.inputs) {
    const std::string generated =
        b.iota ? "element i is i"
               : "uniform over [" + std::to_string(b.low) + ", " + std::to_string(b.high) + "], seeded";
    w.inputs.push_back(
        {b.name, type_name(b.type) + " x (" + b.count.text() + ")", generated, "none: generated only"});
  }
  w.flags = {flags::rows(), flags::seed()};
  for (const ParameterDecl& p : d_.parameters)
    w.flags.push_back({p.name, "N", p.help + " (default " + std::to_string(p.default_value) + ")",
                       datasets::ScaleKind::Count});
  w.output = OutputKind::Rows;
  return w;
}

variants::Space UserOperator::space(const variants::SpaceContext&) const {
  std::vector<variants::Tunable> tunables;
  for (const TunableDecl& t : d_.tunables) {
    tunables.push_back({t.name, t.compile ? variants::TunableKind::Compile : variants::TunableKind::Launch,
                        t.values, t.default_value, t.help});
  }
  std::vector<variants::Constraint> constraints;
  for (const Expression& c : d_.constraints) {
    constraints.push_back(
        {"constraint '" + c.text() + "' does not hold", [this, c](const variants::Params& p) {
           std::vector<Value> tunables;
           for (const TunableDecl& t : d_.tunables) tunables.push_back(p.at(t.name));
           return c.truth(tunables);
         }});
  }
  return variants::Space(d_.name, std::move(tunables), std::move(constraints));
}

Defines UserOperator::defines(const variants::Params& params, const DeviceInfo&) const {
  Defines out;
  std::vector<Value> tunables;
  for (const TunableDecl& t : d_.tunables) {
    tunables.push_back(params.at(t.name));
    if (t.compile) out.push_back({t.name, variants::to_string(params.at(t.name))});
  }
  for (const DefineDecl& define : d_.defines)
    out.push_back({define.name, variants::to_string(define.value.evaluate(tunables))});
  return out;
}

datasets::WorkloadSpec UserOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec;
  spec.op = name();
  spec.generator = "user";
  const auto rows = options.count("rows");
  if (!rows) throw std::logic_error(name() + ": generated workloads need a row count");
  spec.params = {{"rows", *rows}, {"seed", options.seed()}};
  for (const ParameterDecl& p : d_.parameters) {
    const auto text = options.text(p.name);
    spec.params[p.name] = text ? parse_int(*text, "--" + p.name) : p.default_value;
  }
  // Every buffer's size must be known (and fit 32-bit indices) before anything is generated.
  for (const BufferDecl& b : d_.inputs) elements(b, spec);
  elements(d_.output, spec);
  return spec;
}

std::vector<Value> UserOperator::values(const variants::Params* params,
                                        const datasets::WorkloadSpec& spec) const {
  std::vector<Value> out;
  for (const TunableDecl& t : d_.tunables) out.push_back(params ? params->at(t.name) : t.default_value);
  out.push_back(static_cast<std::int64_t>(spec.rows()));
  for (const ParameterDecl& p : d_.parameters) out.push_back(spec.params.at(p.name).get<std::int64_t>());
  return out;
}

std::uint64_t UserOperator::elements(const BufferDecl& buffer, const datasets::WorkloadSpec& spec) const {
  const std::vector<Value> all = values(nullptr, spec);
  const std::vector<Value> workload(all.begin() + static_cast<std::ptrdiff_t>(d_.first_workload_name()),
                                    all.end());
  const std::int64_t n = buffer.count.integer(workload);
  constexpr std::int64_t kMost = std::numeric_limits<std::int32_t>::max();
  if (n < 0 || n > kMost)
    throw UsageError(name() + ": buffer '" + buffer.name + "' would hold " + std::to_string(n) +
                     " elements (" + buffer.count.text() + "); at most 2^31 - 1");
  return static_cast<std::uint64_t>(n);
}

DeviceFootprint UserOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  DeviceFootprint f{elements(d_.output, spec) * 4, elements(d_.output, spec) * 4};
  for (const BufferDecl& b : d_.inputs) {
    f.total += elements(b, spec) * 4;
    f.largest = std::max(f.largest, elements(b, spec) * 4);
  }
  return f;
}

std::unique_ptr<PreparedRun> UserOperator::prepare(Engine& engine, const datasets::WorkloadSpec& spec) const {
  return make_user_run(*this, engine, spec);
}

std::vector<std::filesystem::path> operator_directories(const std::string& path_list) {
  std::vector<std::filesystem::path> out;
  for (const std::string& entry : split(path_list, ':')) {
    if (entry.empty()) continue;
    const std::filesystem::path dir(entry);
    if (!std::filesystem::is_directory(dir))
      throw UsageError("VAREX_OP_PATH: " + entry + ": not a directory");
    if (std::filesystem::exists(dir / "operator.json")) {
      out.push_back(dir);
      continue;
    }
    std::vector<std::filesystem::path> found;
    for (const auto& sub : std::filesystem::directory_iterator(dir)) {
      if (sub.is_directory() && std::filesystem::exists(sub.path() / "operator.json"))
        found.push_back(sub.path());
    }
    if (found.empty())
      throw UsageError("VAREX_OP_PATH: " + entry + ": no operator.json in it or in its directories");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace varex::operators::user

namespace varex::operators {

void register_user(harness::OperatorRegistry& registry) {
  const char* path = std::getenv("VAREX_OP_PATH");
  if (!path) return;
  for (const std::filesystem::path& dir : user::operator_directories(path)) {
    user::Declaration d = user::read_declaration(dir);
    for (const auto& op : registry.all()) {
      if (op->name() == d.name)
        throw UsageError((dir / "operator.json").string() + ": '" + d.name + "' is an operator already");
    }
    registry.add(std::make_unique<user::UserOperator>(std::move(d)));
  }
}

}  // namespace varex::operators
