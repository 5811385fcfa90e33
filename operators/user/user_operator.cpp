#include "operators/user/user_operator.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"
#include "harness/kernel_source.hpp"
#include "harness/operators/registry.hpp"
#include "harness/operators/workload_flags.hpp"
#include "operators/user/contract_operator.hpp"
#include "operators/user/user_kernels.hpp"
#include "operators/user/user_run.hpp"

namespace varex::operators::user {

namespace {

namespace flags = harness::flags;

std::string type_name(ElementType type) {
  return type == ElementType::Int32 ? "int32" : type == ElementType::Uint32 ? "uint32" : "float32";
}

std::string range_text(const BufferDecl& b) {
  if (b.type != ElementType::Float32)
    return "[" + std::to_string(b.low) + ", " + std::to_string(b.high) + "]";
  return "[" + nlohmann::json(b.low_real).dump() + ", " + nlohmann::json(b.high_real).dump() + "]";
}

// --input FILE (the first input) or NAME=FILE,NAME=FILE: the inputs read from files, by name.
std::map<std::string, std::string> input_files(const Declaration& d, const std::string& text) {
  std::map<std::string, std::string> files;
  for (const std::string& item : split(text, ',')) {
    const std::size_t eq = item.find('=');
    const bool named = eq != std::string::npos &&
                       std::any_of(d.inputs.begin(), d.inputs.end(),
                                   [&](const BufferDecl& b) { return b.name == item.substr(0, eq); });
    if (!named && text.find(',') != std::string::npos)
      throw UsageError("--input " + text + ": NAME=FILE,NAME=FILE for several inputs, NAME one of " + d.name +
                       "'s inputs");
    const std::string name = named ? item.substr(0, eq) : d.inputs.front().name;
    if (!files.emplace(name, named ? item.substr(eq + 1) : item).second)
      throw UsageError("--input " + text + ": input '" + name + "' is named twice");
  }
  return files;
}

}  // namespace

UserOperator::UserOperator(Declaration declaration) : d_(std::move(declaration)) {
  add_user_source(d_);
}

WorkloadDecl UserOperator::declaration() const {
  WorkloadDecl w;
  for (const BufferDecl& b : d_.inputs) {
    const std::string generated = b.iota ? "element i is i" : "uniform over " + range_text(b) + ", seeded";
    w.inputs.push_back({b.name, type_name(b.type) + " x (" + b.count.text() + ")", generated,
                        "--input: little-endian 32-bit words"});
  }
  w.flags = {flags::input("Read inputs from files of little-endian 32-bit words instead of generating them: "
                          "FILE (the first input) or NAME=FILE,NAME=FILE; rows from the first one read whose "
                          "count is rows"),
             flags::rows(), flags::seed()};
  for (const ParameterDecl& p : d_.parameters)
    w.flags.push_back({p.name, "N", p.help + " (default " + std::to_string(p.default_value) + ")",
                       datasets::ScaleKind::Count});
  w.output = OutputKind::Rows;
  return w;
}

variants::Space UserOperator::space(const variants::SpaceContext& context) const {
  return variants::Space(d_.name, user_tunables(d_), user_constraints(d_, context.device));
}

std::string UserOperator::device_refusal(const DeviceInfo& device) const {
  return language_refusal(d_, device);
}

Defines UserOperator::defines(const variants::Params& params, const DeviceInfo&) const {
  return user_defines(d_, params);
}

datasets::WorkloadSpec UserOperator::workload(const WorkloadOptions& options) const {
  datasets::WorkloadSpec spec;
  spec.op = name();
  spec.generator = "user";
  std::optional<std::uint64_t> rows = options.count("rows");
  std::map<std::string, std::string> files;
  if (const auto text = options.text("input")) files = input_files(d_, *text);
  nlohmann::json read = nlohmann::json::object();
  for (const BufferDecl& b : d_.inputs) {
    const auto file = files.find(b.name);
    if (file == files.end()) continue;
    const std::string absolute = std::filesystem::absolute(file->second).string();
    const std::uint64_t bytes = datasets::read_input_file(absolute).size();
    if (bytes % 4 != 0)
      throw UsageError("input file " + file->second + " for '" + b.name + "' holds " + std::to_string(bytes) +
                       " bytes, not a whole number of 32-bit words");
    read[b.name] = {{"path", bytes_json(absolute)},
                    {"fingerprint", datasets::file_fingerprint(absolute)},
                    {"elements", bytes / 4}};
    if (!rows && b.count.text() == "rows") rows = bytes / 4;
  }
  if (!rows)
    throw UsageError(name() +
                     ": the rows are not known: read a file for an input whose count is rows, or "
                     "generate the inputs with --rows");
  spec.generator = files.empty() ? "user" : "files";
  spec.params = {{"rows", *rows}, {"seed", options.seed()}};
  for (const ParameterDecl& p : d_.parameters) {
    const auto text = options.text(p.name);
    spec.params[p.name] = text ? parse_int(*text, "--" + p.name) : p.default_value;
  }
  if (!files.empty()) spec.params["files"] = read;
  // Every buffer's size must be known (and fit 32-bit indices) before anything is generated or read.
  for (const BufferDecl& b : d_.inputs) {
    const std::uint64_t n = elements(b, spec);
    if (read.contains(b.name) && read[b.name]["elements"].get<std::uint64_t>() != n)
      throw UsageError("input file " + files.at(b.name) + " holds " +
                       std::to_string(read[b.name]["elements"].get<std::uint64_t>()) + " elements; input '" +
                       b.name + "' holds " + b.count.text() + " = " + std::to_string(n));
  }
  for (const BufferDecl& b : d_.outputs) elements(b, spec);
  return spec;
}

datasets::WorkloadClass UserOperator::workload_class(const datasets::WorkloadSpec& spec) const {
  datasets::WorkloadSpec without_files = spec;  // the files' paths are no part of the class
  without_files.params.erase("files");
  return datasets::default_class(without_files, scale_keys());
}

std::optional<datasets::WorkloadSpec> UserOperator::small_instance(const datasets::WorkloadSpec& spec,
                                                                   std::uint64_t divisor) const {
  if (spec.params.contains("files")) return std::nullopt;  // a file's rows are what they are
  return Operator::small_instance(spec, divisor);
}

std::vector<Value> UserOperator::workload_values(const datasets::WorkloadSpec& spec) const {
  // Sized first and assigned: g++ 12 at -O2 takes a vector of variants grown by push_back for a read of an
  // uninitialised string (-Wmaybe-uninitialized).
  std::vector<Value> out(1 + d_.parameters.size());
  out[0] = static_cast<std::int64_t>(spec.rows());
  for (std::size_t i = 0; i < d_.parameters.size(); ++i)
    out[i + 1] = spec.params.at(d_.parameters[i].name).get<std::int64_t>();
  return out;
}

std::uint64_t UserOperator::elements(const BufferDecl& buffer, const datasets::WorkloadSpec& spec) const {
  const std::int64_t n = buffer.count.integer(workload_values(spec));
  constexpr std::int64_t kMost = std::numeric_limits<std::int32_t>::max();
  if (n < 0 || n > kMost)
    throw UsageError(name() + ": buffer '" + buffer.name + "' would hold " + std::to_string(n) +
                     " elements (" + buffer.count.text() + "); at most 2^31 - 1");
  return static_cast<std::uint64_t>(n);
}

DeviceFootprint UserOperator::footprint(const datasets::WorkloadSpec& spec, const DeviceInfo&) const {
  DeviceFootprint f{0, 0};
  for (const BufferDecl& b : d_.outputs) {
    f.total += elements(b, spec) * 4;
    f.largest = std::max(f.largest, elements(b, spec) * 4);
  }
  for (const BufferDecl& b : d_.inputs) {
    f.total += elements(b, spec) * 4;
    f.largest = std::max(f.largest, elements(b, spec) * 4);
  }
  return f;
}

std::unique_ptr<PreparedRun> UserOperator::prepare(Engine& engine, const datasets::WorkloadSpec& spec) const {
  return make_user_run(*this, engine, spec);
}

std::unique_ptr<BoundRun> UserOperator::bind(Engine& engine, const Binding& binding) const {
  return make_user_bound(*this, engine, binding);
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
  // The built-in operators whose contract a user operator may take (installed before the user's).
  std::map<std::string, const Operator*> built_in;
  user::Contracts contracts;
  for (const auto& op : registry.all()) {
    built_in[op->name()] = op.get();
    if (auto contract = op->contract()) contracts.emplace(op->name(), std::move(*contract));
  }
  for (const std::filesystem::path& dir : user::operator_directories(path)) {
    user::Declaration d = user::read_declaration(dir, contracts);
    for (const auto& op : registry.all()) {
      if (op->name() == d.name)
        throw UsageError((dir / "operator.json").string() + ": '" + d.name + "' is an operator already");
    }
    if (d.contract.empty()) {
      registry.add(std::make_unique<user::UserOperator>(std::move(d)));
    } else {
      const Operator& base = *built_in.at(d.contract);
      registry.add(std::make_unique<user::ContractOperator>(std::move(d), base));
    }
  }
}

}  // namespace varex::operators
