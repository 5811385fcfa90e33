#include "operators/user/declaration.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/errors.hpp"

namespace varex::operators::user {

namespace {

using json = nlohmann::json;

// The reader of one declaration: every error names the file and the field it is about.
class Reader {
 public:
  Reader(std::filesystem::path dir, const Contracts& contracts)
      : dir_(std::move(dir)), file_((dir_ / "operator.json").string()), contracts_(contracts) {}

  Declaration read() { return from(parse_file()); }

  Declaration read(std::string_view text) const {
    json doc;
    try {
      doc = json::parse(text);
    } catch (const json::exception& e) {
      fail(std::string("not JSON: ") + e.what());
    }
    return from(doc);
  }

 private:
  Declaration from(const json& doc) const {
    if (!doc.is_object()) fail("not a JSON object");
    Declaration d;
    d.dir = dir_;
    d.name = string_field(doc, "name", "");
    check_name(d.name, "name");
    d.description = doc.contains("description") ? string_field(doc, "description", "") : "a user operator";
    const json space = tuning_space(doc);
    for (const json& t : array_field(space, "tunables", true)) d.tunables.push_back(tunable(t));
    if (doc.contains("contract")) {
      contract(doc, d);
    } else {
      for (const json& p : array_field(doc, "parameters", false)) d.parameters.push_back(parameter(p));
      d.workload_names.push_back("rows");
      for (const ParameterDecl& p : d.parameters) d.workload_names.push_back(p.name);
    }
    check_unique(d);
    const std::vector<std::string> names = d.names();
    const std::vector<std::string> tunable_names(names.begin(), names.begin() + d.tunables.size());
    for (const json& c : array_field(space, "constraints", false))
      d.constraints.push_back(expression(c, tunable_names, "constraints"));
    if (doc.contains("defines")) {
      if (!doc["defines"].is_object()) fail("'defines' is an object of NAME: expression");
      for (const auto& [name, value] : doc["defines"].items()) {
        check_name(name, "defines");
        d.defines.push_back({name, expression(value, tunable_names, "defines." + name)});
      }
    }
    if (d.contract.empty()) {
      for (const json& i : array_field(doc, "inputs", true))
        d.inputs.push_back(buffer(i, d.workload_names, "inputs"));
      for (const json& o : array_field(doc, "outputs", true))
        d.outputs.push_back(buffer(o, d.workload_names, "outputs"));
    }
    for (const json& b : array_field(doc, "scratch", false)) d.scratch.push_back(buffer(b, names, "scratch"));
    check_buffers(d);
    if (d.contract.empty()) d.reference = reference(object_field(doc, "reference"), d);
    kernels(doc, names, d);
    return d;
  }

  // The tunables and constraints: varex's own fields, or Kernel Tuner's tune_params and restrictions (in the
  // declaration, or a JSON dump of them in the file "kernel_tuner" names): each parameter a compile-time
  // tunable (a define, as Kernel Tuner makes it) whose default is its first value.
  json tuning_space(const json& doc) const {
    const bool own = doc.contains("tunables") || doc.contains("constraints");
    const bool inline_kt = doc.contains("tune_params") || doc.contains("restrictions");
    if (own + inline_kt + doc.contains("kernel_tuner") > 1)
      fail(
          "'tunables' (with 'constraints'), 'tune_params' (with 'restrictions') or 'kernel_tuner': one of "
          "them");
    if (own) return doc;
    if (!inline_kt && !doc.contains("kernel_tuner")) fail("'tunables' is missing");
    json kt = doc;
    std::string where;
    if (doc.contains("kernel_tuner")) {
      const std::filesystem::path path = dir_ / string_field(doc, "kernel_tuner", "");
      std::ifstream in(path);
      if (std::filesystem::is_directory(path) || !in) fail("'kernel_tuner': cannot read " + path.string());
      try {
        kt = json::parse(in);
      } catch (const json::exception& e) {
        fail("'kernel_tuner': " + path.string() + " is not JSON: " + e.what());
      }
      where = path.filename().string() + ": ";
      if (!kt.is_object()) fail("'kernel_tuner': " + where + "not a JSON object");
    }
    if (!kt.contains("tune_params") || !kt["tune_params"].is_object() || kt["tune_params"].empty())
      fail(where + "'tune_params' is a non-empty object of NAME: [values]");
    json out = {{"tunables", json::array()}, {"constraints", json::array()}};
    for (const auto& [name, values] : kt["tune_params"].items())
      out["tunables"].push_back({{"name", name}, {"values", values}});
    if (kt.contains("restrictions")) {
      const json& r = kt["restrictions"];
      if (r.is_string()) {
        out["constraints"].push_back(r);
      } else if (r.is_array()) {
        out["constraints"] = r;
      } else {
        fail(where +
             "'restrictions' is an expression or a list of them (Kernel Tuner's functions cannot be read)");
      }
    }
    return out;
  }

  // A built-in operator's workload: its scalars are the expressions' workload names, its buffers the
  // kernels' arguments, and what an operator of its own declares has no place.
  void contract(const json& doc, Declaration& d) const {
    d.contract = string_field(doc, "contract", "");
    const auto it = contracts_.find(d.contract);
    if (it == contracts_.end()) {
      std::string known;
      for (const auto& [name, decl] : contracts_) known += (known.empty() ? "" : ", ") + name;
      fail("'contract': no built-in operator '" + d.contract + "' offers one (those that do: " + known + ")");
    }
    for (const char* own : {"parameters", "inputs", "outputs", "reference"}) {
      if (doc.contains(own))
        fail(std::string("'") + own + "': an operator with a contract has " + d.contract + "'s");
    }
    d.contract_buffers = it->second.buffers;
    d.workload_names = it->second.scalars;
  }

  // The kernels' source and the kernels: "kernel" (one, with its "file") or "kernels" (in order, from
  // "source").
  void kernels(const json& doc, const std::vector<std::string>& names, Declaration& d) const {
    if (doc.contains("kernel") == doc.contains("kernels"))
      fail("'kernel' (one) or 'kernels' (a list): one of them");
    if (doc.contains("source")) d.source_file = string_field(doc, "source", "");
    if (doc.contains("kernel")) {
      const json& k = object_field(doc, "kernel");
      if (d.source_file.empty()) d.source_file = string_field(k, "file", "kernel");
      d.kernels.push_back(kernel(k, names, d, "kernel"));
    } else {
      for (const json& k : array_field(doc, "kernels", true)) {
        if (!k.is_object()) fail("'kernels' holds objects");
        d.kernels.push_back(kernel(k, names, d, "kernels." + string_field(k, "name", "kernels[]")));
      }
    }
    if (d.source_file.empty()) fail("'source' is missing (the kernels' file)");
    d.language = language(doc, d.source_file);
    const std::filesystem::path path = dir_ / d.source_file;
    std::ifstream in(path);
    if (std::filesystem::is_directory(path) || !in) fail("'source': cannot read " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    d.source_text = text.str();
  }

  // "language", else by the file's extension: CUDA C++ for .cu and .cuh, OpenCL C for the rest.
  Language language(const json& doc, const std::string& file) const {
    if (doc.contains("language")) {
      const std::string l = string_field(doc, "language", "");
      if (l == "opencl") return Language::OpenCL;
      if (l == "cuda") return Language::Cuda;
      fail("'language' is opencl (OpenCL C over varex's portable header) or cuda (CUDA C++), not " + l);
    }
    return file.ends_with(".cu") || file.ends_with(".cuh") ? Language::Cuda : Language::OpenCL;
  }

  [[noreturn]] void fail(const std::string& what) const { throw UsageError(file_ + ": " + what); }

  json parse_file() const {
    if (!std::filesystem::is_directory(dir_)) throw UsageError(dir_.string() + ": not a directory");
    std::ifstream in(file_);
    if (!in) throw UsageError(dir_.string() + ": no operator.json in it (a user operator's declaration)");
    try {
      return json::parse(in);
    } catch (const json::exception& e) {
      fail(std::string("not JSON: ") + e.what());
    }
  }

  std::string string_field(const json& o, const std::string& key, const std::string& where) const {
    const std::string path = where.empty() ? key : where + "." + key;
    if (!o.contains(key)) fail("'" + path + "' is missing");
    if (!o[key].is_string() || o[key].get<std::string>().empty())
      fail("'" + path + "' is a non-empty string");
    return o[key].get<std::string>();
  }

  const json& array_field(const json& o, const std::string& key, bool required) const {
    static const json empty = json::array();
    if (!o.contains(key)) {
      if (required) fail("'" + key + "' is missing");
      return empty;
    }
    if (!o[key].is_array() || (required && o[key].empty())) fail("'" + key + "' is a non-empty array");
    return o[key];
  }

  const json& object_field(const json& o, const std::string& key) const {
    if (!o.contains(key)) fail("'" + key + "' is missing");
    if (!o[key].is_object()) fail("'" + key + "' is an object");
    return o[key];
  }

  void check_name(const std::string& name, const std::string& where) const {
    const bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                    std::all_of(name.begin(), name.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                    });
    if (!ok) fail("'" + where + "': '" + name + "' is not a name (letters, digits and _, not first a digit)");
  }

  // A JSON integer that fits 64 signed bits (an unsigned one past them would wrap).
  static bool is_int64(const json& v) {
    return v.is_number_integer() &&
           (!v.is_number_unsigned() || v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX));
  }

  Value value_of(const json& v, const std::string& where) const {
    if (is_int64(v)) return v.get<std::int64_t>();
    if (v.is_string()) return v.get<std::string>();
    fail("'" + where + "': " + v.dump() + " is not an integer or a string");
  }

  TunableDecl tunable(const json& t) const {
    if (!t.is_object()) fail("'tunables' holds objects");
    TunableDecl d;
    d.name = string_field(t, "name", "tunables[]");
    check_name(d.name, "tunables[].name");
    const std::string where = "tunables." + d.name;
    if (!t.contains("values") || !t["values"].is_array() || t["values"].empty())
      fail("'" + where + ".values' is a non-empty array");
    for (const json& v : t["values"]) {
      Value value = value_of(v, where + ".values");
      if (std::find(d.values.begin(), d.values.end(), value) != d.values.end())
        fail("'" + where + ".values' lists " + v.dump() + " twice");
      d.values.push_back(std::move(value));
    }
    d.default_value = t.contains("default") ? value_of(t["default"], where + ".default") : d.values.front();
    if (std::find(d.values.begin(), d.values.end(), d.default_value) == d.values.end())
      fail("'" + where + ".default' is not one of its values");
    const std::string kind = t.contains("kind") ? string_field(t, "kind", where) : "compile";
    if (kind != "compile" && kind != "launch") fail("'" + where + ".kind' is compile or launch, not " + kind);
    d.compile = kind == "compile";
    if (t.contains("help")) d.help = string_field(t, "help", where);
    return d;
  }

  ParameterDecl parameter(const json& p) const {
    if (!p.is_object()) fail("'parameters' holds objects");
    ParameterDecl d;
    d.name = string_field(p, "name", "parameters[]");
    check_name(d.name, "parameters[].name");
    if (!p.contains("default") || !is_int64(p["default"]))
      fail("'parameters." + d.name + ".default' is an integer");
    d.default_value = p["default"].get<std::int64_t>();
    d.help = p.contains("help") ? string_field(p, "help", "parameters." + d.name) : "a workload parameter";
    return d;
  }

  void check_unique(const Declaration& d) const {
    std::set<std::string> seen{"seed"};
    for (const std::string& name : d.names()) {
      if (!seen.insert(name).second)
        fail("'" + name + "' is declared twice (or is a name of the workload: " + join(d.workload_names) +
             ")");
    }
  }

  // Buffers' names are unique and no expression's name.
  void check_buffers(const Declaration& d) const {
    std::vector<std::string> all = d.names();
    all.insert(all.end(), d.contract_buffers.begin(), d.contract_buffers.end());
    std::vector<const BufferDecl*> own;
    for (const BufferDecl& b : d.inputs) own.push_back(&b);
    for (const BufferDecl& b : d.outputs) own.push_back(&b);
    for (const BufferDecl& b : d.scratch) own.push_back(&b);
    for (const BufferDecl* b : own) {
      if (std::find(all.begin(), all.end(), b->name) != all.end())
        fail("buffer '" + b->name + "' has the name of a tunable, a workload's name or another buffer");
      all.push_back(b->name);
    }
  }

  static bool holds(const std::vector<BufferDecl>& buffers, const std::string& name) {
    return std::any_of(buffers.begin(), buffers.end(), [&](const BufferDecl& b) { return b.name == name; });
  }

  static std::string join(const std::vector<std::string>& words) {
    std::string out;
    for (const std::string& w : words) out += (out.empty() ? "" : ", ") + w;
    return out;
  }

  Expression expression(const json& e, const std::vector<std::string>& names,
                        const std::string& where) const {
    if (is_int64(e)) return Expression::parse(std::to_string(e.get<std::int64_t>()), names);
    if (!e.is_string()) fail("'" + where + "' is an expression (a string)");
    try {
      return Expression::parse(e.get<std::string>(), names);
    } catch (const UsageError& error) {
      fail("'" + where + "': " + error.what());
    }
  }

  BufferDecl buffer(const json& b, const std::vector<std::string>& names, const std::string& list) const {
    if (!b.is_object()) fail("'" + list + "' holds objects");
    BufferDecl d;
    d.name = string_field(b, "name", list + "[]");
    check_name(d.name, list + "[].name");
    const std::string where = list + "." + d.name;
    const std::string type = b.contains("type") ? string_field(b, "type", where) : "int32";
    if (type != "int32" && type != "uint32" && type != "float32")
      fail("'" + where + ".type' is int32, uint32 or float32, not " + type);
    d.type = type == "int32"    ? ElementType::Int32
             : type == "uint32" ? ElementType::Uint32
                                : ElementType::Float32;
    if (list == "scratch" && !b.contains("count")) fail("'" + where + ".count' is missing");
    d.count = expression(b.contains("count") ? b["count"] : json("rows"), names, where + ".count");
    if (list == "inputs" && b.contains("generate")) generator(b["generate"], where, d);
    if (list != "inputs" && b.contains("clear")) d.clear = clear_word(b["clear"], d.type, where);
    if (list == "outputs" && d.type == ElementType::Float32) {
      const json t = b.contains("tolerance") ? b["tolerance"] : json(1e-5);
      if (!t.is_number() || !(t.get<double>() >= 0) || !(t.get<double>() < 1))
        fail("'" + where + ".tolerance' is a number in [0, 1) (relative, and absolute below 1)");
      d.tolerance = t.get<double>();
    } else if (b.contains("tolerance")) {
      fail("'" + where + ".tolerance': only float32 outputs have one (integers compare exactly)");
    }
    return d;
  }

  // The word an output or scratch buffer is set to before each run: a 32-bit integer, or a float32's bits.
  std::uint32_t clear_word(const json& c, ElementType type, const std::string& where) const {
    if (type == ElementType::Float32) {
      if (!c.is_number()) fail("'" + where + ".clear' is a number");
      const float f = static_cast<float>(c.get<double>());
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return bits;
    }
    if (!is_int64(c) || c.get<std::int64_t>() < INT32_MIN || c.get<std::int64_t>() > UINT32_MAX)
      fail("'" + where + ".clear' is a 32-bit integer");
    return static_cast<std::uint32_t>(c.get<std::int64_t>());
  }

  void generator(const json& g, const std::string& where, BufferDecl& d) const {
    if (g == "iota") {
      d.iota = true;
      return;
    }
    if (d.type == ElementType::Float32) {
      const bool range = g.is_object() && g.contains("uniform") && g["uniform"].is_array() &&
                         g["uniform"].size() == 2 && g["uniform"][0].is_number() &&
                         g["uniform"][1].is_number();
      if (!range) fail("'" + where + ".generate' is \"iota\" or {\"uniform\": [LOW, HIGH]}");
      d.low_real = g["uniform"][0].get<double>();
      d.high_real = g["uniform"][1].get<double>();
      constexpr double kMost = 3.0e38;  // inside float's range, so that no element is infinite
      if (!(d.low_real <= d.high_real) || d.low_real < -kMost || d.high_real > kMost)
        fail("'" + where + ".generate': [" + g["uniform"][0].dump() + ", " + g["uniform"][1].dump() +
             "] is not a range of float32");
      return;
    }
    const bool range = g.is_object() && g.contains("uniform") && g["uniform"].is_array() &&
                       g["uniform"].size() == 2 && is_int64(g["uniform"][0]) && is_int64(g["uniform"][1]);
    if (!range) fail("'" + where + ".generate' is \"iota\" or {\"uniform\": [LOW, HIGH]}");
    d.low = g["uniform"][0].get<std::int64_t>();
    d.high = g["uniform"][1].get<std::int64_t>();
    const std::int64_t least = d.type == ElementType::Int32 ? INT32_MIN : 0;
    const std::int64_t most = d.type == ElementType::Int32 ? INT32_MAX : UINT32_MAX;
    if (d.low > d.high || d.low < least || d.high > most)
      fail("'" + where + ".generate': [" + std::to_string(d.low) + ", " + std::to_string(d.high) +
           "] is not a range of its type");
  }

  KernelDecl kernel(const json& k, const std::vector<std::string>& names, const Declaration& d,
                    const std::string& where) const {
    if (k.contains("file") && string_field(k, "file", where) != d.source_file)
      fail("'" + where + ".file': every kernel comes from one file, '" + d.source_file + "'");
    KernelDecl out{
        .name = string_field(k, "name", where),
        .global = expression(k.contains("global") ? k["global"] : json(), names, where + ".global"),
        .local = expression(k.contains("local") ? k["local"] : json(0), names, where + ".local"),
        .args = {}};
    if (!k.contains("args") || !k["args"].is_array()) fail("'" + where + ".args' is an array");
    for (const json& a : k["args"]) out.args.push_back(arg(a, names, d, where + ".args[]"));
    return out;
  }

  ArgDecl arg(const json& a, const std::vector<std::string>& names, const Declaration& d,
              const std::string& where) const {
    const auto is_buffer = [&](const std::string& name) {
      return holds(d.outputs, name) || holds(d.inputs, name) || holds(d.scratch, name) ||
             std::find(d.contract_buffers.begin(), d.contract_buffers.end(), name) !=
                 d.contract_buffers.end();
    };
    ArgDecl out;
    if (a.is_string() && is_buffer(a.get<std::string>())) {
      out.buffer = a.get<std::string>();
      return out;
    }
    if (a.is_object()) {
      const std::string type = a.contains("type") ? string_field(a, "type", where) : "uint";
      static const std::vector<std::string> types{"int", "uint", "long", "ulong"};
      const auto it = std::find(types.begin(), types.end(), type);
      if (it == types.end()) fail("'" + where + ".type' is int, uint, long or ulong, not " + type);
      out.type = static_cast<ArgDecl::Type>(it - types.begin());
      out.value = expression(a.contains("value") ? a["value"] : json(), names, where + ".value");
      return out;
    }
    out.value = expression(a, names, where);
    return out;
  }

  // A command, or a shared library's function with its arguments: the inputs' and outputs' names (their
  // host memory) and expressions over the workload's names (int64_t).
  ReferenceDecl reference(const json& r, const Declaration& d) const {
    ReferenceDecl out;
    if (r.contains("command") == r.contains("library"))
      fail("'reference' has a 'command' or a 'library' (with its 'function' and 'args'): one of them");
    if (r.contains("library")) {
      out.library = string_field(r, "library", "reference");
      out.function = string_field(r, "function", "reference");
      if (!r.contains("args") || !r["args"].is_array()) fail("'reference.args' is an array");
      if (r["args"].size() > kMostReferenceArgs)
        fail("'reference.args': at most " + std::to_string(kMostReferenceArgs) + " arguments");
      for (const json& a : r["args"]) {
        ArgDecl arg;
        if (a.is_string() &&
            (holds(d.inputs, a.get<std::string>()) || holds(d.outputs, a.get<std::string>()))) {
          arg.buffer = a.get<std::string>();
        } else {
          arg.value = expression(a, d.workload_names, "reference.args[]");
          arg.type = ArgDecl::Type::Long;
        }
        out.args.push_back(std::move(arg));
      }
      return out;
    }
    if (!r["command"].is_array() || r["command"].empty())
      fail("'reference.command' is a non-empty array of words (the program and its first arguments)");
    for (const json& w : r["command"]) {
      if (!w.is_string()) fail("'reference.command' holds strings");
      out.command.push_back(w.get<std::string>());
    }
    return out;
  }

  std::filesystem::path dir_;
  std::string file_;
  const Contracts& contracts_;
};

}  // namespace

std::vector<std::string> Declaration::names() const {
  std::vector<std::string> out;
  for (const TunableDecl& t : tunables) out.push_back(t.name);
  out.insert(out.end(), workload_names.begin(), workload_names.end());
  return out;
}

Declaration read_declaration(const std::filesystem::path& dir, const Contracts& contracts) {
  return Reader(dir, contracts).read();
}

Declaration parse_declaration(std::string_view text, const std::filesystem::path& dir,
                              const Contracts& contracts) {
  return Reader(dir, contracts).read(text);
}

}  // namespace varex::operators::user
