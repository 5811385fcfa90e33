#include "cli/options.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "cli/series.hpp"
#include "harness/engine.hpp"

namespace varex::cli {

void WorkloadFlags::add_to(CLI::App& app) {
  // The union of every operator's declared flags; the help names the operators that take a flag when
  // not all of them do. resolve() refuses, per operator, the flags it does not declare.
  // A flag whose operators word it differently (--input reads records for one, a sorted relation for
  // another) gets a help that sends the user to the operator's own.
  std::vector<std::string> order;
  std::map<std::string, std::pair<harness::FlagDecl, std::vector<std::string>>> declared;
  std::set<std::string> worded_differently;
  for (const harness::Operator* op : harness::operators()) {
    for (const harness::FlagDecl& f : op->declaration().flags) {
      auto [it, added] = declared.try_emplace(f.name, f, std::vector<std::string>{});
      if (added) order.push_back(f.name);
      if (it->second.first.help != f.help) worded_differently.insert(f.name);
      it->second.second.push_back(op->name());
    }
  }
  for (const std::string& name : order) {
    const auto& [decl, ops] = declared.at(name);
    std::string help = worded_differently.count(name)
                           ? "Workload flag; what it means depends on the operator (--op OP --help says)"
                           : decl.help;
    if (ops.size() < harness::operators().size()) help += " [" + join(ops, ", ") + "]";
    options_[name] = app.add_option("--" + name, values_[name], help)->option_text(decl.value_name);
  }
  app.add_option("--query", query,
                 "Query parameter key=value (repeatable); `varex ops` lists each operator's keys");
}

datasets::WorkloadSpec WorkloadFlags::resolve(const harness::Operator& op,
                                              const std::vector<DeviceInfo>& devices) const {
  const std::vector<datasets::WorkloadSpec> series = resolve_series(op, devices);
  if (series.size() != 1)
    throw UsageError("the workload flags name " + std::to_string(series.size()) +
                     " workloads; a series is for run, sweep and tune");
  return series.front();
}

std::vector<datasets::WorkloadSpec> WorkloadFlags::resolve_series(
    const harness::Operator& op, const std::vector<DeviceInfo>& devices) const {
  std::map<std::string, std::string> given;
  for (const auto& [name, option] : options_) {
    if (option->count() > 0) given[name] = values_.at(name);
  }
  // The numeric flags the operator declares take a series, in the order it declares them.
  std::vector<std::string> numeric;
  for (const harness::FlagDecl& f : op.declaration().flags) {
    if (f.value_name == "N" || f.value_name == "X") numeric.push_back(f.name);
  }
  std::vector<datasets::WorkloadSpec> out;
  std::set<std::string> seen;
  for (const auto& flags : series_combinations(given, numeric)) {
    datasets::WorkloadSpec spec = resolve_flags(op, devices, flags);
    if (seen.insert(spec.to_json().dump()).second) out.push_back(std::move(spec));
  }
  return out;
}

datasets::WorkloadSpec WorkloadFlags::resolve_flags(const harness::Operator& op,
                                                    const std::vector<DeviceInfo>& devices,
                                                    const std::map<std::string, std::string>& given) const {
  harness::WorkloadOptions options;
  options.flags = given;
  options.query = parse_assignments(query, "--query");
  harness::check_declared(op, options);
  if (options.flags.count("input") && options.flags.count("rows"))
    throw UsageError("--rows and --input exclude each other");
  if (options.flags.count("input2") && options.flags.count("rows2"))
    throw UsageError("--rows2 and --input2 exclude each other");
  const auto& flags = op.declaration().flags;
  const bool takes_rows =
      std::any_of(flags.begin(), flags.end(), [](const harness::FlagDecl& f) { return f.name == "rows"; });
  if (takes_rows && !options.flags.count("input")) {
    if (!options.flags.count("rows"))
      options.flags["rows"] = std::to_string(op.default_rows(default_rows(devices)));
    if (*options.count("rows") == 0)
      throw UsageError("--rows 0: a generated workload needs at least one row");
  }
  return op.workload(options);
}

std::string workload_help(const harness::Operator& op) {
  const harness::WorkloadDecl d = op.declaration();
  std::string out = op.name() + ": " + op.description() + "\n  inputs:\n";
  for (const auto& i : d.inputs) {
    out += "    " + i.name + ": " + i.columns + "\n      generated: " + i.generator +
           "\n      file: " + i.file_format + "\n";
  }
  out += "  workload flags:\n";
  for (const auto& f : d.flags) out += "    --" + f.name + " " + f.value_name + "\n      " + f.help + "\n";
  out += "  query keys (--query key=value):" + std::string(d.query.empty() ? " none\n" : "\n");
  for (const auto& q : d.query) out += "    " + q.key + ": " + q.help + "\n";
  out += "  output: " + to_string(d.output) + "\n";
  return out;
}

nlohmann::json workload_json(const harness::Operator& op) {
  const harness::WorkloadDecl d = op.declaration();
  nlohmann::json inputs = nlohmann::json::array(), flags = nlohmann::json::array(),
                 query = nlohmann::json::array();
  for (const auto& i : d.inputs) {
    inputs.push_back(
        {{"name", i.name}, {"columns", i.columns}, {"generator", i.generator}, {"file", i.file_format}});
  }
  for (const auto& f : d.flags)
    flags.push_back({{"flag", "--" + f.name}, {"value", f.value_name}, {"help", f.help}});
  for (const auto& q : d.query) query.push_back({{"key", q.key}, {"help", q.help}});
  return {{"inputs", inputs}, {"flags", flags}, {"query", query}, {"output", to_string(d.output)}};
}

std::optional<std::string> op_argument(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--op" && i + 1 < argc) return std::string(argv[i + 1]);
    if (a.rfind("--op=", 0) == 0) return a.substr(5);
  }
  return std::nullopt;
}

CLI::Validator number_from(double lo, double hi) {
  const auto text = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return std::string(b);
  };
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi)
          return "Value " + value + " not in range " + text(lo) + " to " + text(hi);
        return "";
      },
      "NUMBER");
}

void MeasureFlags::add_to(CLI::App& app) {
  app.add_option("--warmup", settings.warmup, "Untimed runs after the verified one")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  app.add_option("--min-reps", settings.min_reps, "Fewest timed repetitions")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-reps", settings.max_reps, "Most timed repetitions")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--rel-ci", settings.target_rel_ci,
                 "Stop repeating when the median's 95% interval is within this fraction of it")
      ->capture_default_str()
      ->check(number_from(0.0, 1.0));
  app.add_option("--energy-ms", settings.energy_ms,
                 "Also measure each variant's energy (NVML on NVIDIA GPUs, RAPL on CPUs where exposed) over "
                 "repetitions run back to back for at least this many milliseconds (0: no energy)")
      ->capture_default_str()
      ->check(number_from(0.0, 60000.0));
  app.add_option("--timeout", timeout_seconds, "Seconds one variant may take before it counts as hung")
      ->capture_default_str()
      ->check(number_from(1.0, 86400.0));
  // Checked once every option is parsed: the two bounds of the repetitions must agree. A --max-reps under
  // the default --min-reps lowers it; both given the wrong way round is an error.
  app.parse_complete_callback([this, &app] {
    if (settings.min_reps <= settings.max_reps) return;
    if (app.count("--min-reps") == 0) {
      settings.min_reps = settings.max_reps;
      return;
    }
    throw UsageError("--min-reps " + std::to_string(settings.min_reps) + " is more than --max-reps " +
                     std::to_string(settings.max_reps));
  });
}

std::vector<DeviceInfo> resolve_devices(const std::string& selector) {
  return select_devices(harness::enumerate_devices(), selector);
}

std::vector<DeviceInfo> resolve_devices(const std::string& selector, const harness::Operator& op) {
  std::vector<DeviceInfo> kept;
  std::vector<std::string> refused;
  for (DeviceInfo& d : resolve_devices(selector)) {
    if (std::string why = op.device_refusal(d); !why.empty()) {
      refused.push_back(std::move(why));
    } else {
      kept.push_back(std::move(d));
    }
  }
  if (kept.empty() && !refused.empty()) throw UsageError(refused.front());
  for (const std::string& why : refused) std::cerr << "varex: left out: " << why << "\n";
  return kept;
}

std::uint64_t default_rows(const std::vector<DeviceInfo>& devices) {
  std::uint64_t cache = 0;
  for (const DeviceInfo& d : devices) cache = std::max(cache, d.cache_bytes);
  return std::max<std::uint64_t>(1ULL << 24, std::bit_ceil(std::max<std::uint64_t>(cache, 1)));
}

std::uint64_t parse_rows(const std::string& text, const std::string& flag) {
  return parse_count(text, flag);
}

std::string self_executable() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) throw RuntimeError("cannot find the varex executable through /proc/self/exe");
  return std::string(buffer, static_cast<std::size_t>(n));
}

void print_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], row[c].size());
  }
  auto print = [&](const std::vector<std::string>& row) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    std::cout << line << "\n";
  };
  print(header);
  for (const auto& row : rows) print(row);
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

}  // namespace varex::cli
