// `varex run`: one variant on one workload (or each of a series) and device, its digest and timings.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "cli/options.hpp"
#include "operators/user/compile_check.hpp"
#include "tuner/session.hpp"
#include "variants/launch.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

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

}  // namespace

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
    const auto devices = resolve_devices(f->device, op);
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
    const auto pins =
        variants::upgrade_settings(parse_assignments(f->set, "--set"), harness::generic_space(op));
    std::vector<variants::Params> params;  // each workload's variant, every one checked before any runs
    for (const datasets::WorkloadSpec& spec : series) {
      const auto space = harness::space_for(op, device, spec);
      params.push_back(space.with_settings(space.defaults(), pins));
      harness::check_fits(op, spec, device);
    }
    if (!series.empty()) operators::user::check_default_compiles(op, device, series.front(), pins);
    json all = json::array();
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (!run_one(*f, op, device, series[i], params[i], pins, all)) exit_code = 1;
    }
    if (f->json_out && !all.empty()) std::cout << (series.size() == 1 ? all.front() : all).dump(2) << "\n";
  });
}

}  // namespace varex::cli
