// `varex export`: tuning profiles (JSON or a C++ header) or Kernel Tuner T4 results.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "base/errors.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "harness/operators/operator.hpp"
#include "results/export.hpp"

namespace varex::cli {

namespace {

// Why `ns` cannot name a C++ namespace (empty when it can): identifiers, not keywords, joined by "::".
std::string cpp_namespace_problem(const std::string& ns) {
  static const std::set<std::string> keywords{
      "alignas", "alignof",   "and",    "asm",      "auto",      "bool",     "break",    "case",
      "catch",   "char",      "class",  "const",    "constexpr", "continue", "default",  "delete",
      "do",      "double",    "else",   "enum",     "explicit",  "export",   "extern",   "false",
      "float",   "for",       "friend", "goto",     "if",        "inline",   "int",      "long",
      "mutable", "namespace", "new",    "noexcept", "not",       "nullptr",  "operator", "or",
      "private", "protected", "public", "register", "return",    "short",    "signed",   "sizeof",
      "static",  "struct",    "switch", "template", "this",      "throw",    "true",     "try",
      "typedef", "typename",  "union",  "unsigned", "using",     "virtual",  "void",     "volatile",
      "while"};
  std::size_t start = 0;
  while (true) {
    const std::size_t end = ns.find("::", start);
    const std::string part = ns.substr(start, end == std::string::npos ? std::string::npos : end - start);
    const bool identifier =
        !part.empty() && (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_') &&
        std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
    if (!identifier || keywords.count(part))
      return "'" + ns + "' is not a C++ namespace (identifiers such as varex_tuned or my::tuned)";
    if (end == std::string::npos) return "";
    start = end + 2;
  }
}

// The kernel family and defines of a recorded variant, for profiles that carry what a run needs.
std::optional<results::VariantBuild> variant_build(const std::string& op_name, const DeviceInfo& device,
                                                   const variants::Params& params) {
  const harness::Operator* op = nullptr;
  for (const harness::Operator* o : harness::operators()) {
    if (o->name() == op_name) op = o;
  }
  if (!op) return std::nullopt;
  results::VariantBuild build{op->kernel_family(), {}};
  try {
    for (const harness::Define& d : op->defines(params, device)) build.defines[d.name] = d.value;
  } catch (const std::exception&) {
    return std::nullopt;  // parameters this build no longer decodes
  }
  return build;
}

}  // namespace

void add_export(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand("export",
                                 "Export tuning profiles (JSON or a C++ header) or Kernel Tuner T4 results");
  struct Flags {
    std::string db = "varex.db", format = "json", out, ns = "varex_tuned", device;
    std::optional<std::string> op;
    bool include_runs = false;
    std::vector<std::string> objectives;
  };
  auto f = std::make_shared<Flags>();
  add_db_option(cmd, f->db, "Results database");
  cmd->add_option("--format", f->format,
                  "json (profile), header (profile as C++), kt-t4 (Kernel Tuner T4 results)")
      ->capture_default_str()
      ->check(CLI::IsMember({"json", "header", "kt-t4"}));
  cmd->add_option("--out", f->out, "Output file, - for standard output (a directory for kt-t4)")->required();
  cmd->add_option("--op", f->op, "Only this operator");
  cmd->add_option("--device", f->device,
                  "Only these recorded devices (selector: cpu, gpu, cuda:0, cuda:0@host, a comma list)");
  cmd->add_flag("--include-runs", f->include_runs,
                "Let single `varex run` measurements become profile entries (by default only re-measured "
                "candidates of sweeps and tunings do)");
  add_objectives_option(cmd, f->objectives);
  cmd->add_option("--namespace", f->ns, "C++ namespace of the generated header (a::b nests)")
      ->check(CLI::Validator([](std::string& ns) { return cpp_namespace_problem(ns); }, "NAME"))
      ->capture_default_str();
  cmd->callback([f] {
    const auto owned = open_results(f->db);
    results::Store& store = *owned;
    const auto filter = export_filter(store, f->op, f->device, f->include_runs, f->objectives);
    const auto write = write_output;
    if (f->format == "kt-t4") {
      if (f->out == "-") throw UsageError("--format kt-t4 writes a directory of files; --out - is not one");
      std::error_code ec;
      std::filesystem::create_directories(f->out, ec);
      if (ec) throw UsageError("cannot create '" + f->out + "': " + ec.message());
      const auto docs = results::kt_t4(store, filter);
      for (const auto& d : docs) {
        write(f->out + "/" + d.name, d.results.dump(1));
        write(f->out + "/" + d.name.substr(0, d.name.size() - 5) + ".metadata.json", d.metadata.dump(1));
      }
      std::cout << "wrote " << docs.size() << " T4 results (" << docs.size() << " result and " << docs.size()
                << " metadata files) to " << f->out << "\n";
      return;
    }
    const nlohmann::json profile = results::profile_json(store, filter, operator_defaults(), variant_build);
    if (profile["devices"].empty())
      throw UsageError("no re-measured verified variants to export in " + f->db +
                       (f->include_runs ? "" : " (single runs count only with --include-runs)") +
                       (filter.objectives.empty() || std::count(filter.objectives.begin(),
                                                                filter.objectives.end(), Objective::Time)
                            ? ""
                            : " with their energy measured (--energy-ms)"));
    write(f->out, f->format == "json" ? profile.dump(2) + "\n" : results::profile_header(profile, f->ns));
    std::size_t entries = 0;
    for (const auto& d : profile["devices"]) {
      for (const auto& [_, list] : d["operators"].items()) entries += list.size();
    }
    if (f->out != "-")
      std::cout << "wrote " << entries << " profile entries for " << profile["devices"].size()
                << " device models to " << f->out << "\n";
  });
}

}  // namespace varex::cli
