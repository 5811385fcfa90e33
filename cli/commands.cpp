#include "cli/commands.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include <unistd.h>

#include "base/errors.hpp"
#include "base/process.hpp"
#include "base/text.hpp"
#include "cli/fleet_command.hpp"
#include "cli/messages.hpp"
#include "cli/options.hpp"
#include "harness/worker.hpp"
#include "results/export.hpp"
#include "results/merge.hpp"
#include "results/report.hpp"
#include "results/store.hpp"
#include "tuner/bench.hpp"
#include "tuner/session.hpp"
#include "variants/launch.hpp"
#include "variants/shard.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

// A database opened for reading results: workloads recorded before workload classes (schema version 5)
// get theirs first. A database that cannot be written (read-only file or directory: a fleet's results on
// a read-only share) is opened read-only, and then left as it is.
std::unique_ptr<results::Store> open_results(const std::string& path) {
  const std::string directory = std::filesystem::absolute(path).parent_path().string();
  const bool writable = ::access(path.c_str(), W_OK) == 0 && ::access(directory.c_str(), W_OK) == 0;
  if (!writable && std::filesystem::exists(path))
    return std::make_unique<results::Store>(path, results::Database::Mode::ReadOnly);
  auto store = std::make_unique<results::Store>(path, results::Database::Mode::Existing);
  store->classify_workloads(harness::workload_class_of);
  return store;
}

// Every command's `--db`: an empty path (an unset shell variable) would open SQLite's private temporary
// database, whose results vanish, so it is refused as it is parsed.
CLI::Option* add_db_option(CLI::App* cmd, std::string& db, const std::string& help) {
  return cmd->add_option("--db", db, help)
      ->check(CLI::Validator(
          [](std::string& path) {
            return trim(path).empty() ? std::string("empty; give a database file such as varex.db")
                                      : std::string();
          },
          "PATH"))
      ->capture_default_str();
}

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

// An aggregate's value as a user reads it: an integer as an integer, signed (SUM of negative values), a
// fraction with its significant digits, and "none" where no row was aggregated (MIN, MAX, AVG of nothing).
std::string value_text(const nlohmann::json& value, std::uint64_t rows) {
  const double v = value.is_number() ? value.get<double>() : std::nan("");
  if (std::isnan(v)) return "none: " + std::string(rows ? "undefined" : "no row was aggregated");
  if (std::nearbyint(v) == v && std::abs(v) < 9.007199254740992e15)
    return std::to_string(static_cast<std::int64_t>(v));
  char text[64];
  std::snprintf(text, sizeof text, "%.15g", v);
  return text;
}

// The device rows of a database that a selector names (the same selectors as for this machine's devices,
// matched against the devices the database recorded: `cuda:0`, `cuda:0@node7`, `gpu`, …); every device
// when the selector is empty.
std::optional<std::vector<std::int64_t>> recorded_devices(results::Store& store, const std::string& selector,
                                                          const std::string& where = "") {
  if (selector.empty()) return std::nullopt;
  const auto recorded = store.devices();
  std::vector<DeviceInfo> infos;
  for (const auto& r : recorded) infos.push_back(r.device);
  std::vector<std::int64_t> rows;
  for (const DeviceInfo& d :
       select_devices(infos, selector, "in " + (where.empty() ? store.path() : where))) {
    for (const auto& r : recorded) {
      if (r.device.uid() == d.uid()) rows.push_back(r.row);
    }
  }
  return rows;
}

// Refuses, before any work, a path `write_output` could not write: empty, a directory, or in a folder that
// does not exist.
void check_output_path(const std::string& flag, const std::string& path) {
  if (path == "-") return;
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  if (path.empty() || fs::is_directory(p, ec))
    throw UsageError(flag + ": '" + path + "' is not a file to write");
  if (p.has_parent_path() && !fs::is_directory(p.parent_path(), ec))
    throw UsageError(flag + ": the folder of '" + path + "' does not exist");
}

// Writes `text` to the file, or to standard output for "-".
void write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    std::cout.flush();
    return;
  }
  std::ofstream out(path);
  out << text;
  if (!out) throw UsageError("cannot write '" + path + "'");
}

void add_devices(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand("devices", "List every OpenCL and CUDA device of this machine");
  auto json_out = std::make_shared<bool>(false);
  auto selector = std::make_shared<std::string>("all");
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->add_option("--device", *selector,
                  "Device selector: all, cpu, gpu, opencl, cuda, an id, or a comma list")
      ->capture_default_str();
  cmd->callback([=] {
    const auto all = harness::enumerate_devices();
    const auto devices = *selector == "all" ? all : select_devices(all, *selector);
    if (*json_out) {
      json out = json::array();
      for (const auto& d : devices) {
        json j = d.to_json();
        j["views"] = json::array();  // every id of the same physical device, this one included
        for (const auto& other : all) {
          if (other.physical == d.physical) j["views"].push_back(other.id);
        }
        out.push_back(j);
      }
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (devices.empty()) {
      std::cout << "no OpenCL or CUDA devices found\n";
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& d : devices) {
      // The other views of the same physical device: its OpenCL and CUDA sides.
      std::string physical = d.physical;
      for (const auto& other : all) {
        if (other.id != d.id && other.physical == d.physical) physical += " = " + other.id;
      }
      // The vendor as a profile names it (docs/PROFILE.md): what a consumer's lookup matches on.
      rows.push_back({d.id, to_string(d.backend), d.type, d.vendor, d.name, d.arch,
                      std::to_string(d.compute_units), format_bytes(d.global_mem), format_bytes(d.local_mem),
                      std::to_string(d.max_work_group), format_bytes(d.cache_bytes), physical});
    }
    print_table({"id", "backend", "type", "vendor", "name", "arch", "CUs", "global mem", "local mem",
                 "max wg", "cache", "physical device"},
                rows);
  });
}

void add_ops(CLI::App& app, int&) {
  auto* cmd =
      app.add_subcommand("ops", "List the operators: their workloads (flags, query keys) and tunables");
  auto json_out = std::make_shared<bool>(false);
  auto only = std::make_shared<std::string>();
  cmd->add_option("op", *only, "Show this operator only");
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->callback([=] {
    if (!only->empty()) harness::find_operator(*only);  // names the operators when unknown
    // Values that depend on the device are shown for a generic OpenCL GPU (harness::generic_space).
    json out = json::array();
    for (const harness::Operator* op : harness::operators()) {
      if (!only->empty() && op->name() != *only) continue;
      const auto space = harness::generic_space(*op);
      json tunables = json::array();
      for (const auto& t : space.tunables()) {
        json values = json::array();
        for (const auto& v : t.values) values.push_back(variants::to_json(v));
        tunables.push_back({{"name", t.name},
                            {"kind", t.kind == variants::TunableKind::Compile ? "compile" : "launch"},
                            {"default", variants::to_json(t.default_value)},
                            {"values", values},
                            {"help", t.help}});
      }
      json constraints = json::array();
      for (const auto& c : space.constraints()) constraints.push_back(c.description);
      out.push_back({{"name", op->name()},
                     {"description", op->description()},
                     {"workload", workload_json(*op)},
                     {"tunables", tunables},
                     {"constraints", constraints}});
    }
    if (*json_out) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    for (const auto& o : out) {
      std::cout << workload_help(harness::find_operator(o["name"].get<std::string>())) << "  tunables:\n";
      for (const auto& t : o["tunables"]) {
        std::vector<std::string> values;
        for (const auto& v : t["values"]) values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        std::cout << "    " << t["name"].get<std::string>() << " (" << t["kind"].get<std::string>()
                  << ", default "
                  << (t["default"].is_string() ? t["default"].get<std::string>() : t["default"].dump())
                  << "): " << join(values, ", ") << "\n        " << t["help"].get<std::string>() << "\n";
      }
      std::cout << "  constraints:\n";
      for (const auto& c : o["constraints"]) std::cout << "    - " << c.get<std::string>() << "\n";
    }
  });
}

struct VariantsFlags {
  std::string op;
  std::string device = "all";
  WorkloadFlags workload;
  std::vector<std::string> set;
  std::optional<std::string> shard;
  bool json_out = false;
};

void add_variants(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand("variants", "List the valid variants of an operator's space per device");
  auto f = std::make_shared<VariantsFlags>();
  cmd->add_option("--op", f->op, "Operator")->required();
  cmd->add_option("--device", f->device, "Device selector")->capture_default_str();
  cmd->add_option("--set", f->set, "Restrict a tunable to values: name=v1,v2 (repeatable)");
  cmd->add_option("--shard", f->shard,
                  "Only the variants of shard K of N (K/N), as `sweep --shard` measures them");
  f->workload.add_to(*cmd);
  cmd->add_flag("--json", f->json_out, "Print JSON");
  cmd->callback([f] {
    const harness::Operator& op = harness::find_operator(f->op);
    const auto devices = resolve_devices(f->device);
    const auto spec = f->workload.resolve(op, devices);
    const auto pins = variants::upgrade_settings(parse_assignments(f->set, "--set"));
    const auto shard = f->shard ? std::optional(variants::Shard::parse(*f->shard)) : std::nullopt;
    json out = json::array();
    for (const DeviceInfo& d : devices) {
      const auto space = harness::space_for(op, d, spec);
      // A plan's space can hold 10^8 points: listing is for what fits on a screen or in a file.
      constexpr std::uint64_t kMostListed = 1000000;
      const std::uint64_t size = space.restricted(pins).cardinality();
      if (size > kMostListed)
        throw UsageError(op.name() + "'s space holds " + std::to_string(size) + " points on " + d.id +
                         " (at most " + std::to_string(kMostListed) +
                         " are listed): pin tunables with --set");
      const auto points =
          shard ? variants::shard_of(space.restricted(pins), *shard).enumerate() : space.enumerate(pins);
      json list = json::array();
      for (const auto& p : points) {
        list.push_back({{"id", harness::variant_id(op, d.backend, p)}, {"params", variants::to_json(p)}});
      }
      out.push_back({{"device", d.id},
                     {"op", op.name()},
                     {"rows", spec.rows()},
                     {"space_size", space.cardinality()},
                     {"count", points.size()},
                     {"variants", list}});
    }
    if (f->json_out) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    for (const auto& d : out) {
      std::cout << d["device"].get<std::string>() << ": " << d["count"].get<std::size_t>()
                << " valid variants of " << d["space_size"].get<std::uint64_t>() << " points for "
                << d["rows"].get<std::uint64_t>() << " rows\n";
      for (const auto& v : d["variants"]) {
        std::cout << "  " << v["id"].get<std::string>() << "  "
                  << variants::describe(variants::params_from_json(v["params"])) << "\n";
      }
    }
  });
}

json measurement_json(const harness::Operator& op, const DeviceInfo& device, const std::string& variant,
                      const variants::Params& params, const datasets::WorkloadSpec& spec,
                      const varex::Measurement& m, double probe_gbps) {
  json j = m.to_json();
  j.erase("samples_ms");
  j["op"] = op.name();
  j["device"] = device.id;
  j["device_name"] = device.name;
  j["variant"] = variant;
  j["params"] = variants::to_json(params);
  j["workload"] = spec.to_json();
  j["input_rows"] = spec.rows();
  j["reps"] = m.samples_ms.size();
  j["probe_gbps"] = probe_gbps;
  if (const json plan = op.query_plan(spec); !plan.empty()) j["query_plan"] = plan;
  if (m.ok()) {
    if (const auto value = op.result_value(spec, m.result)) j["value"] = *value;
  }
  return j;
}

struct RunFlags {
  std::string op;
  std::string device;
  std::string db = "varex.db";
  WorkloadFlags workload;
  MeasureFlags measure;
  std::vector<std::string> set;
  bool json_out = false;
  bool no_baseline = false;
  bool quiet = false;
};

// One workload of `run`: a session of its own; prints its result (or adds its JSON to `all`). False when
// the variant failed.
bool run_one(const RunFlags& f, const harness::Operator& op, const DeviceInfo& device,
             const datasets::WorkloadSpec& spec, const variants::Params& params,
             const std::map<std::string, std::string>& pins, json& all) {
  // A session of its own, through the code of sweep and tune: the "single" strategy over the one point
  // the settings pick, measured once.
  tuner::RunOptions options;
  options.kind = "run";
  options.strategy = "single";
  options.remeasure = 0;
  options.fresh = true;
  options.op = &op;
  options.devices = {device};
  options.workload = spec;
  options.settings = f.measure.settings;
  options.timeout_seconds = f.measure.timeout_seconds;
  options.pins = pins;
  options.progress = !f.quiet;
  options.worker_executable = self_executable();
  results::Store store(f.db);
  const tuner::DeviceRun run = tuner::run_sessions(store, options).front();
  if (!run.last) return false;  // failed before it measured: said on stderr
  const varex::Measurement& m = *run.last;
  const double probe = run.probe_gbps;
  const std::string id = harness::variant_id(op, device.backend, params);
  const json j = measurement_json(op, device, id, params, spec, m, probe);
  if (f.json_out) {
    all.push_back(j);
  } else {
    std::cout << op.name() << " on " << device.id << " (" << device.name << "), variant " << id << "\n"
              << "  params    " << variants::describe(params) << "\n"
              << "  workload  " << spec.describe() << "\n";
    if (j.contains("query_plan")) std::cout << "  plan      " << j["query_plan"].dump() << "\n";
    std::cout << "  status    " << varex::to_string(m.status) << (m.error.empty() ? "" : ": " + m.error)
              << "\n"
              << "  rows      " << m.result.rows << "   checksum " << m.result.checksum
              << (static_cast<std::int64_t>(m.result.checksum) < 0 && j.contains("value")
                      ? " (a negative sum, as 64 unsigned bits)"
                      : "")
              << "   verified " << (m.verified ? "yes" : "no") << "\n";
    if (j.contains("value")) std::cout << "  value     " << value_text(j["value"], m.result.rows) << "\n";
    if (m.ok()) {
      std::cout << "  kernel    " << fixed(m.kernel.median, 4) << " ms  (95% CI " << fixed(m.kernel.ci_low, 4)
                << " .. " << fixed(m.kernel.ci_high, 4) << ", " << m.samples_ms.size() << " reps)\n"
                << "  h2d       " << fixed(m.h2d_ms, 3) << " ms   d2h " << fixed(m.d2h_ms, 3)
                << " ms   compile " << fixed(m.compile_ms, 1) << " ms\n"
                << "  bandwidth " << fixed(m.gbps, 1) << " GB/s = " << fixed(100 * m.probe_fraction, 1)
                << "% of the probe's " << fixed(probe, 1) << " GB/s\n";
    }
    if (m.baseline) {
      std::cout << "  baseline  " << m.baseline->engine << " on " << m.baseline->threads
                << " host threads: " << fixed(m.baseline->ms, 3) << " ms"
                << (m.baseline->verified ? "" : " (WRONG RESULT)");
      if (m.ok() && m.kernel.median > 0)
        std::cout << ", " << fixed(m.baseline->ms / m.kernel.median, 2) << "x the kernel";
      std::cout << "\n";
    }
  }
  if (!m.ok()) {
    std::cerr << "varex: variant " << id << " on " << device.id << ": " << varex::to_string(m.status)
              << (m.error.empty() ? "" : ": " + m.error.substr(0, 300)) << "\n";
    return false;
  }
  return true;
}

void add_run(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("run", "Run one variant on one workload and device; print its digest and timings");
  auto f = std::make_shared<RunFlags>();
  cmd->add_option("--op", f->op, "Operator")->required();
  cmd->add_option("--device", f->device, "Device (the selector must match exactly one)")->required();
  add_db_option(cmd, f->db, "Results database");
  cmd->add_option("--set", f->set, "Tunable value name=value (repeatable); defaults otherwise");
  f->workload.add_to(*cmd);
  f->measure.add_to(*cmd);
  cmd->add_flag("--no-baseline", f->no_baseline,
                "Skip the operator's CPU baseline (timed by default where it has one)");
  cmd->add_flag("--quiet", f->quiet, "Say nothing on stderr about what it does (probing)");
  cmd->add_flag("--json", f->json_out, "Print JSON");
  cmd->callback([f, &exit_code] {
    const harness::Operator& op = harness::find_operator(f->op);
    f->measure.settings.baseline = !f->no_baseline;
    const auto devices = resolve_devices(f->device);
    if (devices.size() != 1) {
      throw UsageError("run needs exactly one device, '" + f->device + "' matches " +
                       std::to_string(devices.size()));
    }
    const DeviceInfo& device = devices.front();
    // --energy-ms on a device without a meter: refused as sweep and tune refuse it, before anything is
    // written.
    tuner::RunOptions energy;
    energy.devices = devices;
    energy.settings = f->measure.settings;
    tuner::check_objective(energy);
    const std::vector<datasets::WorkloadSpec> series = f->workload.resolve_series(op, devices);
    const auto pins = variants::upgrade_settings(parse_assignments(f->set, "--set"));
    std::vector<variants::Params> params;  // each workload's variant, every one checked before any runs
    for (const datasets::WorkloadSpec& spec : series) {
      const auto space = harness::space_for(op, device, spec);
      params.push_back(space.with_settings(space.defaults(), pins));
      harness::check_fits(op, spec, device);
    }
    json all = json::array();
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (!run_one(*f, op, device, series[i], params[i], pins, all)) exit_code = 1;
    }
    if (f->json_out && !all.empty()) std::cout << (series.size() == 1 ? all.front() : all).dump(2) << "\n";
  });
}

// sweep and tune: one session per device through the tuning driver.
struct SessionFlags {
  std::string op;
  std::string device = "all";
  std::string db = "varex.db";
  WorkloadFlags workload;
  MeasureFlags measure;
  std::vector<std::string> set;
  std::string strategy = "genetic";
  std::string budget = "10%";
  std::uint64_t seed = kDefaultStrategySeed;
  int remeasure = 3;
  std::string objective = "time";
  std::optional<double> cutoff;
  std::string small_instance = "auto";
  std::optional<std::string> shard;
  bool no_warm_start = false;
  bool reprobe = false;
  bool fresh = false;
  bool sequential = false;
  bool wait = false;
  bool quiet = false;
  bool json_out = false;
  bool check = false;
};

// The operators whose variants may move fewer bytes than their runs count: their share of the copy probe is
// no bound (Operator::moves_all_its_bytes).
std::set<std::string> probe_not_a_bound() {
  std::set<std::string> out;
  for (const harness::Operator* op : harness::operators()) {
    if (!op->moves_all_its_bytes()) out.insert(op->name());
  }
  return out;
}

json run_json(const tuner::DeviceRun& r, Objective objective) {
  json j{{"device", r.device.id},
         {"session", r.session},
         {"status", r.status},
         {"valid_variants", r.valid_variants},
         {"evaluations", r.outcome.evaluations},
         {"remeasured", r.outcome.remeasured},
         {"stopped_at_bound", r.outcome.stopped_at_bound},
         {"resumed_measurements", r.resumed_measurements},
         {"ok", r.outcome.ok},
         {"failed", r.outcome.failed},
         {"cut_off", r.outcome.cut_off},
         {"energy_skipped", r.outcome.energy_skipped},
         {"spent_s", r.outcome.spent_s},
         {"probe_gbps", r.probe_gbps}};
  if (!r.error.empty()) j["error"] = r.error;
  if (r.small_workload) {
    j["small_instance"] = {{"divisor", r.outcome.small_divisor},
                           {"evaluations", r.outcome.small_evaluations},
                           {"workload", r.small_workload->to_json()}};
  }
  if (!r.small_error.empty()) j["small_instance_error"] = r.small_error;
  if (r.outcome.needed_s > 0) j["budget_needed_s"] = r.outcome.needed_s;
  if (r.outcome.best && r.outcome.best_measurement) {
    const varex::Measurement& m = *r.outcome.best_measurement;
    j["best"] = {{"variant", r.best_variant},          {"params", variants::to_json(*r.outcome.best)},
                 {"kernel_ms", m.kernel.median},       {"gbps", m.gbps},
                 {"probe_fraction", m.probe_fraction}, {"objective", to_string(objective)},
                 {"value", r.outcome.best_value}};
    if (m.energy) {
      j["best"]["energy_j"] = m.energy->joules_per_rep();
      j["best"]["power_w"] = m.energy->watts();
    }
  }
  return j;
}

// The table a sweep or tune prints for one workload: a line per device, then what the lanes shared. The
// declared best's time always; its energy and power where it carries energy.
void print_session_runs(const tuner::RunOptions& options, const std::vector<tuner::DeviceRun>& runs,
                        double wall_s) {
  const bool energy = std::any_of(runs.begin(), runs.end(), [](const tuner::DeviceRun& r) {
    return r.outcome.best_measurement && r.outcome.best_measurement->energy;
  });
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs) {
    const auto& m = r.outcome.best_measurement;
    const bool best = r.outcome.best && m;
    std::vector<std::string> row{
        r.device.id,
        std::to_string(r.session),
        r.status,
        std::to_string(r.outcome.evaluations) + "/" + std::to_string(r.valid_variants),
        std::to_string(r.outcome.failed),
        std::to_string(r.outcome.cut_off),
        fixed(r.outcome.spent_s, 1),
        best ? fixed(m->kernel.median, 4) : "-",
        best ? fixed(m->gbps, 1) : "-",
        best ? fixed(100 * m->probe_fraction, 1) + "%" : "-"};
    if (energy) {
      row.push_back(best && m->energy ? fixed(m->energy->joules_per_rep() * 1e3, 2) : "-");
      row.push_back(best && m->energy ? fixed(m->energy->watts(), 0) : "-");
    }
    row.push_back(r.outcome.best ? variants::describe(*r.outcome.best) : "-");
    rows.push_back(std::move(row));
  }
  const bool tune = options.kind == "tune";
  const bool by_time = options.objective == Objective::Time;
  std::cout << options.op->name() << " " << options.kind
            << (tune ? " (" + options.strategy + ", budget " + options.budget.to_string() + ")" : "")
            << (by_time ? "" : ", best by " + to_string(options.objective)) << " over "
            << options.workload.describe() << "\n";
  std::vector<std::string> header{"device",  "session", "status",  "evaluated", "failed",
                                  "cut off", "spent s", "best ms", "GB/s",      "of probe"};
  if (energy) header.insert(header.end(), {"mJ", "W"});
  header.push_back("best variant");
  print_table(header, rows);
  std::size_t lanes = 0;
  for (const auto& phase : tuner::plan_schedule(options.devices, options.schedule))
    lanes = std::max(lanes, phase.lanes.size());
  std::cout << "wall time " << fixed(wall_s, 1) << " s, up to " << lanes
            << (lanes == 1 ? " device" : " physical devices") << " at a time\n";
  const std::string unit = std::string(" ") + objective_unit(options.objective);
  for (const auto& r : runs) {
    if (!r.outcome.search_best || !r.outcome.best) continue;
    std::cout << r.device.id << ": the search's best sample, " << fixed(r.outcome.search_best_value, 4)
              << unit << " (" << variants::describe(*r.outcome.search_best)
              << "), was not the best when the best candidates were measured again: "
              << fixed(r.outcome.best_value, 4) << unit << " is the best of their re-measurements\n";
  }
}

// What a session command's --check found: the command that would run, on one line.
void print_check(const tuner::RunOptions& options, const std::vector<datasets::WorkloadSpec>& series,
                 std::uint64_t variants, const std::string& db) {
  std::vector<std::string> ids;
  for (const DeviceInfo& d : options.devices) ids.push_back(d.id);
  std::cout << "check passed: would " << options.kind << " " << options.op->name() << " on "
            << (ids.empty() ? std::string("no device here") : join(ids, ", ")) << ", " << series.size()
            << " workload" << (series.size() == 1 ? "" : "s") << " (" << variants << " valid variant"
            << (variants == 1 ? "" : "s") << " in all"
            << (options.kind == "tune"
                    ? ", strategy " + options.strategy + ", budget " + options.budget.to_string()
                    : std::string())
            << "), into " << db << "; nothing measured or recorded\n";
}

// `for_fleet`: the flags of a fleet's tasks, checked on a host that may have none of the nodes' devices.
void add_session_command(CLI::App& app, int& exit_code, const std::string& kind, bool for_fleet = false) {
  const bool tune = kind == "tune";
  auto* cmd = app.add_subcommand(
      kind, tune ? "Tune an operator on every selected device with a search strategy and a budget"
                 : "Measure every valid variant of an operator on every selected device");
  auto f = std::make_shared<SessionFlags>();
  cmd->add_option("--op", f->op, "Operator")->required();
  cmd->add_option("--device", f->device, "Device selector")->capture_default_str();
  add_db_option(cmd, f->db, "Results database");
  cmd->add_option("--set", f->set,
                  "Search a sub-space: restrict a tunable to values name=v1,v2 (repeatable)");
  cmd->add_option(
      "--shard", f->shard,
      "Only shard K of N (K/N, from 0) of the space: N commands with K = 0 … N-1 cover every variant "
      "once between them (varex fleet runs them as Slurm tasks)");
  cmd->add_flag("--reprobe", f->reprobe, "Measure the devices' copy bandwidth again");
  cmd->add_flag("--fresh", f->fresh,
                "Start a new session even if the same command ran before (default: resume it)");
  cmd->add_flag("--wait", f->wait,
                "If another process runs the same command's session, wait for it (default: refuse)");
  cmd->add_flag("--sequential", f->sequential,
                "One device after another (default: one worker per physical GPU at the same time; CPU "
                "devices always run alone)");
  if (tune) {
    cmd->add_option("--strategy", f->strategy, "Search strategy: " + join(tuner::strategy_names(), ", "))
        ->capture_default_str();
    cmd->add_option("--budget", f->budget,
                    "Evaluations (200), wall time (90s, 2m, 1h) or share of the exhaustive cost (10%)")
        ->capture_default_str();
    cmd->add_option("--strategy-seed", f->seed,
                    "Seed of the strategy's random choices (--seed seeds the data)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--small-instance", f->small_instance,
                    "Where a budget in seconds leaves a search of the workload too little time after the "
                    "default: auto searches a smaller instance of it (fewer rows, a smaller scale factor) "
                    "and measures the finalists again on the workload; never, always")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "never", "always"}));
    cmd->add_flag(
        "--no-warm-start", f->no_warm_start,
        "Do not measure first the bests the database holds for this operator on other workloads and "
        "devices (nearest first)");
  }
  cmd->add_option("--remeasure", f->remeasure,
                  "Best candidates measured again with the full protocol before one is declared best (the "
                  "re-measured times are what `varex best` compares)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--objective", f->objective,
                  "What the best minimises: time (the median kernel time), energy (per repetition) or edp "
                  "(energy x time). energy and edp measure each variant's energy (--energy-ms, 100 unless "
                  "given) and need a meter on every device (NVML for NVIDIA GPUs, RAPL for CPUs)")
      ->capture_default_str();
  cmd->add_option(
         "--cutoff", f->cutoff,
         std::string("Time a variant once, and never let it be best, when its first repetition is "
                     "slower than this many times the time of the best so far (0: measure every variant in "
                     "full; default: ") +
             (tune ? fixed(tuner::default_cutoff(Objective::Time), 0) + " for a tune, " +
                         fixed(tuner::default_cutoff(Objective::Energy), 0) + " for a tune by energy)"
                   : "0 for a sweep)"))
      ->check(number_from(0.0, 1e6));
  cmd->add_flag("--quiet", f->quiet, "No progress on stderr (only failures)");
  f->workload.add_to(*cmd);
  f->measure.add_to(*cmd);
  cmd->add_flag("--json", f->json_out, "Print JSON");
  cmd->add_flag(
      "--check", f->check,
      "Check the command as it would run here (the operator, every workload, the settings, the devices, "
      "their meters, spaces and memory) and print what would run, without measuring or writing the "
      "database; refused as the command would be (varex fleet checks its tasks' flags so, without the "
      "devices, which are the nodes')");
  cmd->callback([f, &exit_code, kind, tune, for_fleet] {
    tuner::RunOptions options;
    options.kind = kind;
    options.op = &harness::find_operator(f->op);
    // A fleet's check may select none of this machine's devices: it checks what it can without them (the
    // devices' meters are the nodes' to have). A user's --check checks what the command would, here.
    const bool here = !for_fleet;
    options.devices =
        here ? resolve_devices(f->device) : devices_matching(harness::enumerate_devices(), f->device);
    const std::vector<datasets::WorkloadSpec> series =
        f->workload.resolve_series(*options.op, options.devices);
    options.settings = f->measure.settings;
    options.timeout_seconds = f->measure.timeout_seconds;
    options.pins = variants::upgrade_settings(parse_assignments(f->set, "--set"));
    if (f->shard) options.shard = variants::Shard::parse(*f->shard);
    options.reprobe = f->reprobe;
    options.fresh = f->fresh;
    options.schedule.parallel = !f->sequential;
    options.wait = f->wait;
    options.progress = !f->quiet;
    options.worker_executable = self_executable();
    options.remeasure = f->remeasure;
    options.objective = objective_from_string(f->objective);
    // An energy objective measures energy; a time objective measures it only where asked.
    if (options.objective != Objective::Time && options.settings.energy_ms <= 0)
      options.settings.energy_ms = tuner::kObjectiveEnergyMs;
    options.cutoff = f->cutoff.value_or(tune ? tuner::default_cutoff(options.objective) : 0.0);
    options.warm_start = tune && !f->no_warm_start;
    if (!std::isfinite(options.cutoff) || (options.cutoff > 0 && options.cutoff < 1))
      throw UsageError("--cutoff: " + fixed(options.cutoff, 2) +
                       " would cut off variants faster than the best; give 0 or at least 1");
    if (tune) {
      options.strategy = f->strategy;
      options.budget = tuner::Budget::parse(f->budget);
      options.seed = f->seed;
      using Mode = tuner::TuneSettings::SmallInstance;
      options.small_instance = f->small_instance == "never"    ? Mode::Never
                               : f->small_instance == "always" ? Mode::Always
                                                               : Mode::Auto;
      if (options.small_instance == Mode::Always && options.budget.kind != tuner::Budget::Kind::Seconds)
        throw UsageError(
            "--small-instance always: a small instance is searched within a budget in seconds, "
            "not --budget " +
            f->budget);
    } else {
      options.strategy = "exhaustive";
    }
    // Everything is checked before anything is measured or recorded: the strategy, the devices' meters for
    // an energy objective, every workload of the series, every device's space and memory.
    tuner::check_strategy_name(options.strategy);
    tuner::check_objective(options, here);
    std::uint64_t variants = 0;
    for (const datasets::WorkloadSpec& spec : series) {
      if (spec.rows() == 0)
        throw UsageError("the input has no rows: there is nothing to " + kind +
                         " (varex run measures it once)");
      for (const DeviceInfo& d : options.devices) {
        const variants::Space space = harness::space_for(*options.op, d, spec).restricted(options.pins);
        tuner::make_strategy(options.strategy, space);
        // A shard may hold none of them (more shards than variants): its session finishes at once.
        if (space.count_valid() == 0) {
          throw UsageError(options.op->name() + ": no valid variant on " + d.id +
                           " with the given --set values");
        }
        harness::check_fits(*options.op, spec, d);
        variants += space.count_valid();
      }
    }
    if (f->check) {
      if (!for_fleet) print_check(options, series, variants, f->db);
      return;
    }
    results::Store store(f->db);
    json out = json::array();
    // One workload after another, each a session per device as a command of its own would run it: an
    // interrupted series run again skips the finished workloads and resumes the one it stopped in.
    for (const datasets::WorkloadSpec& spec : series) {
      options.workload = spec;
      const auto start = std::chrono::steady_clock::now();
      // The first workload's budget counts from the command's start; each later one's from its own.
      options.started = &spec == &series.front() ? process_started() : start;
      const auto runs = tuner::run_sessions(store, options);
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (const auto& r : runs) {
        out.push_back(run_json(r, options.objective));
        if (series.size() > 1) out.back()["workload"] = spec.to_json();
        if (!r.error.empty()) exit_code = 1;
      }
      if (!f->json_out) print_session_runs(options, runs, wall_s);
    }
    if (f->json_out) std::cout << out.dump(2) << "\n";
  });
}

// `varex KIND ARGS --check` in this process: a fleet's flags refused as the sweep or tune would refuse them.
void check_session_args(const std::string& kind, const std::vector<std::string>& args) {
  CLI::App app{"varex"};
  int code = 0;
  add_session_command(app, code, kind, /*for_fleet=*/true);
  std::vector<std::string> words{"varex", kind};
  words.insert(words.end(), args.begin(), args.end());
  words.push_back("--check");
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw UsageError(rephrase_parse_error(e.what()));
  }
}

void add_sweep(CLI::App& app, int& exit_code) {
  add_session_command(app, exit_code, "sweep");
}
void add_tune(CLI::App& app, int& exit_code) {
  add_session_command(app, exit_code, "tune");
}

struct BenchFlags {
  std::string db = "varex.db";
  std::optional<std::string> op;
  std::string device;
  std::string sessions;
  int seeds = 25;
  std::string budgets = "2%,5%,10%,20%";
  std::string strategies;
  bool warm_start = false;
  std::optional<std::string> csv;
  std::optional<std::string> json;
};

void add_tuner_bench(CLI::App& app, int&) {
  auto* cmd =
      app.add_subcommand("tuner-bench", "Replay every strategy against the recorded exhaustive sweeps");
  auto f = std::make_shared<BenchFlags>();
  add_db_option(cmd, f->db, "Database with exhaustive sweeps");
  cmd->add_option("--op", f->op, "Only sweeps of this operator");
  cmd->add_option(
      "--device", f->device,
      "Only sweeps of these recorded devices (selector: cpu, gpu, cuda:0, cuda:0@host, a comma list)");
  cmd->add_option("--sessions", f->sessions, "Only these sweep sessions (comma list of ids)");
  cmd->add_option("--seeds", f->seeds, "Seeds per strategy and budget")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--budgets", f->budgets, "Budgets as shares of the exhaustive cost")->capture_default_str();
  cmd->add_option("--strategies", f->strategies, "Strategies (default: all but exhaustive)");
  cmd->add_flag("--warm-start", f->warm_start,
                "Start each sweep's replays from the fastest variants of the other sweeps of its operator "
                "(other devices and workloads), as a tune starts from the database's bests");
  cmd->add_option("--csv", f->csv,
                  "Also write the table as CSV to this file (-: print CSV instead of the table)");
  cmd->add_option(
         "--json", f->json,
         "Also write the results as JSON to this file (- or no file: print JSON instead of the table)")
      ->expected(0, 1)
      ->default_str("-");
  cmd->callback([f] {
    if (f->op) harness::find_operator(*f->op);
    if (f->csv) check_output_path("--csv", *f->csv);
    if (f->json) check_output_path("--json", *f->json);
    tuner::BenchOptions options;
    options.seeds = f->seeds;
    options.warm_start = f->warm_start;
    options.budgets.clear();
    for (const std::string& b : split(f->budgets, ',')) {
      const tuner::Budget budget = tuner::Budget::parse(b);
      if (budget.kind != tuner::Budget::Kind::Fraction)
        throw UsageError("--budgets: '" + b + "' is not a share such as 10%");
      options.budgets.push_back(budget.value);
    }
    if (!f->strategies.empty()) {
      for (const std::string& s : split(f->strategies, ',')) {
        tuner::make_strategy(s, variants::Space("check", {}, {}));  // rejects unknown names
        options.strategies.push_back(s);
      }
    }
    // The user's file is only read: an older schema is migrated in a private copy, never in place.
    results::PrivateCopy copy(f->db);
    results::Store& store = copy.store();
    const auto devices = recorded_devices(store, f->device, f->db);
    std::vector<std::int64_t> sessions;
    if (!f->sessions.empty()) {
      for (const std::string& id : split(f->sessions, ',')) sessions.push_back(parse_int(id, "--sessions"));
    }
    auto sweeps = tuner::load_sweeps(store, f->op, devices, sessions);
    if (sweeps.empty())
      throw UsageError("no recorded sweeps to replay in " + f->db + " (run varex sweep first)");
    for (const auto& sweep : sweeps) {
      if (!sweep.space_changes.empty())
        std::cerr << "tuner-bench: session " << sweep.session << " (" << sweep.op << " on " << sweep.device.id
                  << ") was recorded under an older space: " << sweep.space_changes << "\n";
    }
    // Progress on standard error: redrawn in place on a terminal, else a line every few seconds.
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    auto last = std::chrono::steady_clock::now();
    options.progress = [&](std::size_t done, std::size_t total) {
      const auto now = std::chrono::steady_clock::now();
      const bool finished = done == total;
      if (!finished && now - last < (terminal ? std::chrono::milliseconds(200) : std::chrono::seconds(5)))
        return;
      last = now;
      std::cerr << (terminal ? "\r" : "") << "tuner-bench: " << done << " of " << total << " replays ("
                << fixed(100.0 * static_cast<double>(done) / static_cast<double>(total), 0) << "%)"
                << (terminal && !finished ? "" : "\n");
      std::cerr.flush();
    };
    const tuner::BenchReport report = tuner::run_bench(std::move(sweeps), options);
    if (f->csv) write_output(*f->csv, report.to_csv());
    if (f->json) write_output(*f->json, report.to_json().dump(2) + "\n");
    if (f->csv != "-" && f->json != "-") std::cout << report.to_text();
  });
}

struct BestFlags {
  std::optional<std::string> op;
  std::string device;
  std::string db = "varex.db";
  bool include_runs = false;
  bool json_out = false;
  std::string objective = "time";
};

void add_best(CLI::App& app, int&) {
  auto* cmd = app.add_subcommand(
      "best",
      "Show the best variant per device, operator and workload class (re-measured times; docs/PROFILE.md)");
  auto f = std::make_shared<BestFlags>();
  cmd->add_option("--op", f->op, "Only this operator");
  cmd->add_option("--device", f->device,
                  "Only these recorded devices (selector: cpu, gpu, cuda:0, cuda:0@host, a comma list)");
  add_db_option(cmd, f->db, "Results database");
  cmd->add_flag(
      "--include-runs", f->include_runs,
      "Let single `varex run` measurements compete (by default only re-measured candidates of sweeps "
      "and tunings do)");
  cmd->add_option("--objective", f->objective,
                  "Best by: time (the median kernel time), energy (per repetition) or edp (energy x time); "
                  "energy and edp count only measurements that carry energy (--energy-ms)")
      ->capture_default_str();
  cmd->add_flag("--json", f->json_out, "Print JSON");
  cmd->callback([f] {
    if (f->op) harness::find_operator(*f->op);
    const Objective objective = objective_from_string(f->objective);
    const auto store = open_results(f->db);
    const auto best = store->best({f->op, recorded_devices(*store, f->device), f->include_runs, objective});
    const std::set<std::string> unbounded = probe_not_a_bound();
    json out = json::array();
    std::vector<std::vector<std::string>> rows;
    bool any_energy = false;
    for (const auto& b : best) {
      const std::string device = b.device.id + "@" + b.device.host;
      out.push_back({{"device", device},
                     {"device_name", b.device.name},
                     {"host", b.device.host},
                     {"backend", to_string(b.device.backend)},
                     {"op", b.op},
                     {"workload", b.workload.to_json()},
                     {"workload_class", b.workload_class.to_json()},
                     {"variant", b.variant_id},
                     {"params", variants::to_json(b.params)},
                     {"kernel_ms", b.kernel_ms},
                     {"kernel_ci", {b.kernel_ci_low, b.kernel_ci_high}},
                     {"h2d_ms", b.h2d_ms},
                     {"d2h_ms", b.d2h_ms},
                     {"gbps", b.gbps},
                     {"probe_gbps", b.probe_gbps ? json(*b.probe_gbps) : json(nullptr)},
                     {"probe_fraction", b.probe_fraction},
                     {"probe_is_bound", !unbounded.count(b.op)},
                     {"method", b.method},
                     {"session", b.session},
                     {"candidates", b.candidates},
                     {"candidate_measurements", b.measurements},
                     {"objective", to_string(b.objective)},
                     {"value", b.value},
                     {"energy_j", b.energy_j ? json(*b.energy_j) : json(nullptr)},
                     {"power_w", b.power_w ? json(*b.power_w) : json(nullptr)}});
      rows.push_back({device, b.op, b.workload_class.describe(), fixed(b.kernel_ms, 4),
                      b.energy_j ? fixed(*b.energy_j * 1e3, 2) : "-", b.power_w ? fixed(*b.power_w, 0) : "-",
                      fixed(b.gbps, 1),
                      fixed(100 * b.probe_fraction, 1) + "%" + (unbounded.count(b.op) ? " (no bound)" : ""),
                      variants::describe(b.params)});
      any_energy = any_energy || b.energy_j.has_value();
    }
    if (f->json_out) {
      std::cout << out.dump(2) << "\n";
      return;
    }
    if (best.empty()) {
      std::cout << "no re-measured verified variants in " << f->db
                << (objective == Objective::Time ? "" : " with their energy measured")
                << (f->include_runs ? "" : " (single runs count only with --include-runs)") << "\n";
      return;
    }
    // The energy columns where a best carries energy.
    if (!any_energy) {
      for (auto& row : rows) row.erase(row.begin() + 4, row.begin() + 6);
    }
    print_table(any_energy ? std::vector<std::string>{"device", "op", "workload", "kernel ms", "mJ", "W",
                                                      "GB/s", "of probe", "variant"}
                           : std::vector<std::string>{"device", "op", "workload", "kernel ms", "GB/s",
                                                      "of probe", "variant"},
                rows);
  });
}

void add_probe(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("probe", "Measure and store the devices' copy bandwidth");
  auto device = std::make_shared<std::string>("all");
  auto db = std::make_shared<std::string>("varex.db");
  auto json_out = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  cmd->add_option("--device", *device, "Device selector")->capture_default_str();
  add_db_option(cmd, *db, "Results database");
  cmd->add_flag("--quiet", *quiet, "Say nothing on stderr about what it does");
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->callback([=, &exit_code] {
    const auto devices = resolve_devices(*device);
    results::Store store(*db);
    json out = json::array();
    std::vector<std::vector<std::string>> rows;
    for (const DeviceInfo& d : devices) {
      harness::RemoteDevice remote(self_executable(), d);
      if (!*quiet)
        std::cerr << "varex: probing " << d.id << "'s copy bandwidth (at most about 10 s of copies)\n";
      tuner::ProbeOutcome p;
      try {
        p = tuner::probe_device(store, store.device(d), remote, true);
      } catch (const RuntimeError& e) {
        std::cerr << "varex: " << d.id << " failed: " << e.what() << "\n";
        exit_code = 1;
        continue;
      }
      if (!p.note.empty()) {
        std::cerr << "varex: " << d.id << ": " << p.note << "\n";
        exit_code = 1;
      }
      out.push_back({{"device", d.id},
                     {"name", d.name},
                     {"gbps", p.gbps},
                     {"stored", p.stored},
                     {"method", p.measured ? p.measured->method : ""},
                     {"details", p.measured ? p.measured->details : json::object()}});
      rows.push_back({d.id, d.name, fixed(p.gbps, 1), p.measured ? p.measured->method : "",
                      p.stored ? "stored" : "kept the stored figure"});
    }
    if (*json_out)
      std::cout << out.dump(2) << "\n";
    else
      print_table({"device", "name", "GB/s", "best method", "result"}, rows);
  });
}

// Every operator's default (source) parameters as text, which profiles carry for their last fallback.
results::DefaultParams operator_defaults() {
  results::DefaultParams out;
  for (const harness::Operator* op : harness::operators()) {
    for (const auto& [name, value] : harness::generic_space(*op).defaults())
      out[op->name()][name] = variants::to_string(value);
  }
  return out;
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

results::ExportFilter export_filter(results::Store& store, const std::optional<std::string>& op,
                                    const std::string& devices, bool include_runs,
                                    const std::vector<std::string>& objectives) {
  if (op) harness::find_operator(*op);
  results::ExportFilter filter{op, recorded_devices(store, devices), include_runs, {}};
  for (const std::string& list : objectives) {
    for (const std::string& name : split(list, ',')) {
      const Objective o = objective_from_string(trim(name));
      if (std::find(filter.objectives.begin(), filter.objectives.end(), o) == filter.objectives.end())
        filter.objectives.push_back(o);
    }
  }
  return filter;
}

// --objective for export and report: which objectives' bests they take.
void add_objectives_option(CLI::App* cmd, std::vector<std::string>& objectives) {
  cmd->add_option(
      "--objective", objectives,
      "Only the bests by these objectives: time, energy, edp (repeatable, or a comma list; default: "
      "time, and energy and edp where measurements carry energy)");
}

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

void add_merge(CLI::App& app, int&) {
  auto* cmd =
      app.add_subcommand("merge", "Merge databases from several machines into one, without duplicates");
  auto into = std::make_shared<std::string>();
  auto sources = std::make_shared<std::vector<std::string>>();
  auto json_out = std::make_shared<bool>(false);
  cmd->add_option("--into", *into, "Target database (created if missing)")->required();
  cmd->add_option("sources", *sources, "Databases to merge in")->required();
  cmd->add_flag("--json", *json_out, "Print JSON");
  cmd->callback([=] {
    const results::MergeReport report = results::merge_databases(*into, *sources);
    json out = json::array();
    for (std::size_t i = 0; i < sources->size(); ++i) {
      const auto& stats = report.sources[i];
      out.push_back({{"source", (*sources)[i]},
                     {"devices", stats.devices},
                     {"sessions", stats.sessions},
                     {"measurements", stats.measurements}});
      if (!*json_out) {
        std::cout << (*sources)[i] << ": " << stats.devices << " devices, " << stats.sessions << " sessions, "
                  << stats.measurements << " measurements\n";
      }
    }
    if (*json_out) {
      std::cout << json{{"sources", out},
                        {"added",
                         {{"devices", report.added.devices},
                          {"sessions", report.added.sessions},
                          {"measurements", report.added.measurements}}}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << "added to " << *into << ": " << report.added.devices << " devices, "
                << report.added.sessions << " sessions, " << report.added.measurements << " measurements\n";
    }
  });
}

void add_report(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("report", "Write CSV files and an HTML report with plots");
  struct Flags {
    std::string db = "varex.db", out, device;
    std::optional<std::string> op;
    bool include_runs = false;
    std::vector<std::string> objectives;
  };
  auto f = std::make_shared<Flags>();
  add_db_option(cmd, f->db, "Results database");
  cmd->add_option("--out", f->out, "Output directory (a directory: - is refused)")->required();
  cmd->add_option("--op", f->op, "Only this operator");
  cmd->add_option("--device", f->device,
                  "Only these recorded devices (selector: cpu, gpu, cuda:0, cuda:0@host, a comma list)");
  cmd->add_flag("--include-runs", f->include_runs, "Let single `varex run` measurements compete for best");
  add_objectives_option(cmd, f->objectives);
  cmd->callback([f, &exit_code] {
    if (f->out == "-") {
      throw UsageError(
          "report --out -: a report is a directory of files (CSV files and index.html), not one stream; "
          "give a directory (varex best --json and varex export --out - print to standard output)");
    }
    const auto store = open_results(f->db);
    const auto filter = export_filter(*store, f->op, f->device, f->include_runs, f->objectives);
    const auto files =
        results::write_report(*store, f->out, filter, operator_defaults(), probe_not_a_bound());
    for (const auto& c : files.csv) std::cout << c << "\n";
    if (files.html.empty()) {
      std::cerr << "varex: " << files.plot_problem << "\n";
      exit_code = 1;
    } else {
      std::cout << files.html << "\n";
    }
  });
}

}  // namespace

std::vector<harness::OperatorCommand> operator_aliases() {
  std::vector<harness::OperatorCommand> out;
  for (const harness::Operator* op : harness::operators()) {
    for (harness::OperatorCommand& command : op->commands()) {
      if (command.expand) out.push_back(std::move(command));
    }
  }
  return out;
}

// The commands operators add of their own (OperatorCommand with `run`; aliases are main's): their declared
// flags as string options, their output printed.
void add_operator_commands(CLI::App& app) {
  for (const harness::Operator* op : harness::operators()) {
    for (const harness::OperatorCommand& command : op->commands()) {
      if (!command.run) continue;
      auto* cmd = app.add_subcommand(command.name, command.summary);
      auto values = std::make_shared<std::map<std::string, std::string>>();
      for (const harness::CommandFlag& flag : command.flags) {
        (*values)[flag.name] = flag.default_value;
        auto* option = cmd->add_option("--" + flag.name, (*values)[flag.name], flag.help);
        option->type_name(flag.value_name);
        if (flag.required) option->required();
        if (!flag.default_value.empty()) option->capture_default_str();
      }
      cmd->callback([values, run = command.run] { std::cout << run(*values); });
    }
  }
}

const char* const kExitStatuses =
    "Exit status: 0 done; 1 a runtime failure (driver, device, I/O); 2 bad usage or input (one line says\n"
    "what); 3 busy: another process runs the same session (retry, or pass --wait); 130 interrupted\n"
    "(everything measured so far is recorded).";

void add_commands(CLI::App& app, int& exit_code) {
  add_devices(app, exit_code);
  add_ops(app, exit_code);
  add_variants(app, exit_code);
  add_run(app, exit_code);
  add_sweep(app, exit_code);
  add_tune(app, exit_code);
  add_tuner_bench(app, exit_code);
  add_best(app, exit_code);
  add_probe(app, exit_code);
  add_export(app, exit_code);
  add_merge(app, exit_code);
  add_report(app, exit_code);
  add_fleet(app, check_session_args);
  add_operator_commands(app);
}

}  // namespace varex::cli
