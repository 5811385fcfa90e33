// `varex sweep` and `varex tune`: one command, one session per device and workload through the tuning
// driver; a fleet checks its tasks' flags with it (check_session_args).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>

#include "base/errors.hpp"
#include "base/process.hpp"
#include "base/text.hpp"
#include "cli/commands/common.hpp"
#include "cli/commands/registry.hpp"
#include "cli/messages.hpp"
#include "cli/options.hpp"
#include "operators/user/compile_check.hpp"
#include "tuner/session.hpp"
#include "variants/launch.hpp"
#include "variants/shard.hpp"

namespace varex::cli {

namespace {

using nlohmann::json;

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

// The flags only a tune has: its search strategy, budget and seed, the small instance, the warm start.
void add_search_flags(CLI::App* cmd, SessionFlags& f) {
  cmd->add_option("--strategy", f.strategy, "Search strategy: " + join(tuner::strategy_names(), ", "))
      ->capture_default_str();
  cmd->add_option("--budget", f.budget,
                  "Evaluations (200), wall time (90s, 2m, 1h) or share of the exhaustive cost (10%)")
      ->capture_default_str();
  cmd->add_option("--strategy-seed", f.seed, "Seed of the strategy's random choices (--seed seeds the data)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--small-instance", f.small_instance,
                  "Where a budget in seconds leaves a search of the workload too little time after the "
                  "default: auto searches a smaller instance of it (fewer rows, a smaller scale factor) "
                  "and measures the finalists again on the workload; never, always")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "never", "always"}));
  cmd->add_flag("--no-warm-start", f.no_warm_start,
                "Do not measure first the bests the database holds for this operator on other workloads and "
                "devices (nearest first)");
}

// Every flag of a sweep or tune, in the order --help lists them (a tune's search flags among them).
void add_session_flags(CLI::App* cmd, SessionFlags& f, bool tune) {
  cmd->add_option("--op", f.op, "Operator")->required();
  cmd->add_option("--device", f.device, "Device selector")->capture_default_str();
  add_db_option(cmd, f.db, "Results database");
  cmd->add_option("--set", f.set, "Search a sub-space: restrict a tunable to values name=v1,v2 (repeatable)");
  cmd->add_option(
      "--shard", f.shard,
      "Only shard K of N (K/N, from 0) of the space: N commands with K = 0 … N-1 cover every variant "
      "once between them (varex fleet runs them as Slurm tasks)");
  cmd->add_flag("--reprobe", f.reprobe, "Measure the devices' copy bandwidth again");
  cmd->add_flag("--fresh", f.fresh,
                "Start a new session even if the same command ran before (default: resume it)");
  cmd->add_flag("--wait", f.wait,
                "If another process runs the same command's session, wait for it (default: refuse)");
  cmd->add_flag("--sequential", f.sequential,
                "One device after another (default: one worker per physical GPU at the same time; CPU "
                "devices always run alone)");
  if (tune) add_search_flags(cmd, f);
  cmd->add_option("--remeasure", f.remeasure,
                  "Best candidates measured again with the full protocol before one is declared best (the "
                  "re-measured times are what `varex best` compares)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--objective", f.objective,
                  "What the best minimises: time (the median kernel time), energy (per repetition) or edp "
                  "(energy x time). energy and edp measure each variant's energy (--energy-ms, 100 unless "
                  "given) and need a meter on every device (NVML for NVIDIA GPUs, RAPL for CPUs)")
      ->capture_default_str();
  cmd->add_option(
         "--cutoff", f.cutoff,
         std::string("Time a variant once, and never let it be best, when its first repetition is "
                     "slower than this many times the time of the best so far (0: measure every variant in "
                     "full; default: ") +
             (tune ? fixed(tuner::default_cutoff(Objective::Time), 0) + " for a tune, " +
                         fixed(tuner::default_cutoff(Objective::Energy), 0) + " for a tune by energy)"
                   : "0 for a sweep)"))
      ->check(number_from(0.0, 1e6));
  cmd->add_flag("--quiet", f.quiet, "No progress on stderr (only failures)");
  f.workload.add_to(*cmd);
  f.measure.add_to(*cmd);
  cmd->add_flag("--json", f.json_out, "Print JSON");
  cmd->add_flag(
      "--check", f.check,
      "Check the command as it would run here (the operator, every workload, the settings, the devices, "
      "their meters, spaces and memory) and print what would run, without measuring or writing the "
      "database; refused as the command would be (varex fleet checks its tasks' flags so, without the "
      "devices, which are the nodes')");
}

// A tune's search settings from its flags into `options`, refused where they contradict each other.
void read_search_flags(const SessionFlags& f, tuner::RunOptions& options) {
  options.strategy = f.strategy;
  options.budget = tuner::Budget::parse(f.budget);
  options.seed = f.seed;
  using Mode = tuner::TuneSettings::SmallInstance;
  options.small_instance = f.small_instance == "never"    ? Mode::Never
                           : f.small_instance == "always" ? Mode::Always
                                                          : Mode::Auto;
  if (options.small_instance == Mode::Always && options.budget.kind != tuner::Budget::Kind::Seconds)
    throw UsageError(
        "--small-instance always: a small instance is searched within a budget in seconds, "
        "not --budget " +
        f.budget);
}

// The rest of the flags (all but the operator, devices and workloads) into `options`, each refused as it
// is read, in the order the command has always refused them.
void read_session_flags(const SessionFlags& f, bool tune, tuner::RunOptions& options) {
  options.settings = f.measure.settings;
  options.timeout_seconds = f.measure.timeout_seconds;
  options.pins =
      variants::upgrade_settings(parse_assignments(f.set, "--set"), harness::generic_space(*options.op));
  if (f.shard) options.shard = variants::Shard::parse(*f.shard);
  options.reprobe = f.reprobe;
  options.fresh = f.fresh;
  options.schedule.parallel = !f.sequential;
  options.wait = f.wait;
  options.progress = !f.quiet;
  options.worker_executable = self_executable();
  options.remeasure = f.remeasure;
  options.objective = objective_from_string(f.objective);
  // An energy objective measures energy; a time objective measures it only where asked.
  if (options.objective != Objective::Time && options.settings.energy_ms <= 0)
    options.settings.energy_ms = tuner::kObjectiveEnergyMs;
  options.cutoff = f.cutoff.value_or(tune ? tuner::default_cutoff(options.objective) : 0.0);
  options.warm_start = tune && !f.no_warm_start;
  if (!std::isfinite(options.cutoff) || (options.cutoff > 0 && options.cutoff < 1))
    throw UsageError("--cutoff: " + fixed(options.cutoff, 2) +
                     " would cut off variants faster than the best; give 0 or at least 1");
  if (tune) {
    read_search_flags(f, options);
  } else {
    options.strategy = "exhaustive";
  }
}

// Everything is checked before anything is measured or recorded: the strategy, the devices' meters for an
// energy objective, every workload of the series, every device's space and memory. Returns the number of
// valid variants the command would measure (or search) in all.
std::uint64_t check_before_measuring(const tuner::RunOptions& options,
                                     const std::vector<datasets::WorkloadSpec>& series,
                                     const std::string& kind, bool here) {
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
      // A user's kernel that does not compile: one line now, not a failed measurement per variant.
      if (here && &spec == &series.front())
        operators::user::check_default_compiles(*options.op, d, spec, options.pins);
    }
  }
  return variants;
}

// Runs the series into the database and prints what each workload's sessions found; a session that failed
// sets `exit_code` to 1.
void run_series(const SessionFlags& f, tuner::RunOptions& options,
                const std::vector<datasets::WorkloadSpec>& series, int& exit_code) {
  results::Store store(f.db);
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
    if (!f.json_out) print_session_runs(options, runs, wall_s);
  }
  if (f.json_out) std::cout << out.dump(2) << "\n";
}

// `for_fleet`: the flags of a fleet's tasks, checked on a host that may have none of the nodes' devices.
void add_session_command(CLI::App& app, int& exit_code, const std::string& kind, bool for_fleet = false) {
  const bool tune = kind == "tune";
  auto* cmd = app.add_subcommand(
      kind, tune ? "Tune an operator on every selected device with a search strategy and a budget"
                 : "Measure every valid variant of an operator on every selected device");
  auto f = std::make_shared<SessionFlags>();
  add_session_flags(cmd, *f, tune);
  cmd->callback([f, &exit_code, kind, tune, for_fleet] {
    tuner::RunOptions options;
    options.kind = kind;
    options.op = &harness::find_operator(f->op);
    // A fleet's check may select none of this machine's devices: it checks what it can without them (the
    // devices' meters are the nodes' to have). A user's --check checks what the command would, here.
    const bool here = !for_fleet;
    options.devices = here ? resolve_devices(f->device, *options.op)
                           : devices_matching(harness::enumerate_devices(), f->device);
    const std::vector<datasets::WorkloadSpec> series =
        f->workload.resolve_series(*options.op, options.devices);
    read_session_flags(*f, tune, options);
    const std::uint64_t variants = check_before_measuring(options, series, kind, here);
    if (f->check) {
      if (!for_fleet) print_check(options, series, variants, f->db);
      return;
    }
    run_series(*f, options, series, exit_code);
  });
}

}  // namespace

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

}  // namespace varex::cli
