#include "tuner/session.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "base/device_lock.hpp"
#include "base/errors.hpp"
#include "base/interrupt.hpp"
#include "base/process.hpp"
#include "base/text.hpp"
#include "harness/energy.hpp"
#include "tuner/device_evaluator.hpp"
#include "tuner/progress.hpp"
#include "tuner/warm_start.hpp"

namespace varex::tuner {

namespace {

// The session's outcome as recorded: the declared best's time, whatever the objective.
results::SessionOutcome outcome_of(const TuneOutcome& o, const std::string& best_variant) {
  const double best_ms =
      o.best_measurement ? o.best_measurement->kernel.median : std::numeric_limits<double>::infinity();
  return {best_variant, best_ms, o.evaluations, o.spent_s};
}

// A run's session ("single") is the exhaustive search of its one-point space.
std::unique_ptr<Strategy> strategy_of(const RunOptions& options, const variants::Space& space) {
  return make_strategy(options.kind == "run" ? "exhaustive" : options.strategy, space);
}

// The space a device's session searches: the pinned sub-space (or its shard), or for a run the one point its
// settings pick (UsageError for a point that is not valid).
variants::Space space_of(const RunOptions& options, const DeviceInfo& device) {
  const variants::Space space = harness::space_for(*options.op, device, options.workload);
  if (options.kind != "run") {
    variants::Space pinned = space.restricted(options.pins);
    return options.shard ? variants::shard_of(pinned, *options.shard) : pinned;
  }
  const variants::Params point = space.with_settings(space.defaults(), options.pins);
  std::vector<variants::Tunable> tunables = space.tunables();
  for (auto& t : tunables) t.values = {t.default_value = point.at(t.name)};
  return {space.op(), std::move(tunables), space.constraints()};
}

// A claimed session given up unused: a new one goes as if never begun, a taken-over one is closed as
// interrupted (discard_session keeps one that was measured in, to be resumed).
void give_back(results::Store& store, const results::SessionClaim& claim) {
  if (claim.kind == results::SessionClaim::Kind::Created) store.discard_session(claim.session);
  if (claim.kind == results::SessionClaim::Kind::Resumed) store.end_session(claim.session, "interrupted");
}

// Everything one device's session needs besides its own run: its connection to the store, the shared
// display and the signal that another lane failed.
struct LaneContext {
  results::Store* store = nullptr;
  ProgressBoard* board = nullptr;
  std::size_t line = 0;
  const std::atomic<bool>* abandon = nullptr;
  double preamble_s = 0;  // from the command's start until the lanes started: every session pays it
};

// What run_sessions settled for a device before its lane starts: its row, space and claimed session.
struct DevicePlan {
  std::int64_t device_row = 0;
  std::optional<variants::Space> space;
  results::SessionClaim claim;
  std::vector<variants::Params> warm_start;
};

// The owner's heartbeat while a session runs, from a thread of its own (a variant may take minutes), through
// a connection of its own.
class Heartbeat {
 public:
  // The connection is opened here, so that a database that cannot be opened fails the caller, not the thread.
  Heartbeat(const std::string& db, std::int64_t session)
      : store_(std::make_unique<results::Store>(db, results::Database::Mode::Existing)),
        thread_([this, session] {
          std::unique_lock lock(mutex_);
          while (!stop_) {
            if (wake_.wait_for(lock, std::chrono::seconds(15), [this] { return stop_; })) break;
            try {
              store_->heartbeat(session);
            } catch (const std::exception&) {
              // A busy database delays one beat; the lease outlasts several.
            }
          }
        }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

 private:
  std::unique_ptr<results::Store> store_;  // before thread_: the thread uses it from its start
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// A finished session reported as it was recorded: its outcome, its failures, and its best's measurement
// valued by the objective: its re-measurement, which declared it (its best search measurement where the
// session re-measured nothing).
void report_finished(results::Store& store, std::int64_t session, Objective objective, DeviceRun& run) {
  run.session = session;
  run.status = "finished before";
  for (const auto& r : store.sessions(std::nullopt, std::nullopt)) {
    if (r.id != session || !r.outcome) continue;
    run.outcome.evaluations = r.outcome->evaluations;
    run.outcome.spent_s = r.outcome->spent_seconds;
    run.best_variant = r.outcome->best_variant;
  }
  bool declared_by_remeasure = false;
  for (const auto& r : store.session_measurements(session)) {
    if (r.purpose == "search") ++(r.m.ok() ? run.outcome.ok : run.outcome.failed);
    if (r.purpose == "search" && r.m.cut_off) ++run.outcome.cut_off;
    if (r.purpose == "remeasure") ++run.outcome.remeasured;
    if (r.variant_id != run.best_variant || !r.m.ok()) continue;
    const std::optional<double> value = objective_value(r.m, objective);
    if (!value) continue;
    // Its re-measurement stands for it; before one is seen, its best search measurement.
    const bool remeasured = r.purpose == "remeasure";
    const bool lower = !run.outcome.best_measurement || *value < run.outcome.best_value;
    if (!remeasured && (declared_by_remeasure || !lower)) continue;
    declared_by_remeasure = declared_by_remeasure || remeasured;
    run.outcome.best = r.params;
    run.outcome.best_value = *value;
    run.outcome.best_measurement = r.m;
  }
}

void run_device(const LaneContext& lane, const RunOptions& options, const DevicePlan& plan, DeviceRun& run) {
  results::Store& store = *lane.store;
  const harness::Operator& op = *options.op;
  const DeviceInfo& device = run.device;
  const variants::Space& space = *plan.space;
  run.session = plan.claim.session;
  // A resumed session: its recorded measurements answer the strategy first.
  std::vector<results::RecordedMeasurement> resumed;
  if (plan.claim.kind == results::SessionClaim::Kind::Resumed)
    resumed = store.session_measurements(run.session);
  const auto lane_started = std::chrono::steady_clock::now();
  const Heartbeat heartbeat(store.path(), run.session);

  harness::RemoteDevice remote(options.worker_executable, device);
  if (options.reprobe || !store.probe_gbps(plan.device_row)) {
    lane.board->update(lane.line,
                       "probing the copy bandwidth (first use of this device; at most about 10 s of copies)",
                       true);
    if (options.kind == "run" && options.progress)
      lane.board->message("varex: probing " + device.id +
                          "'s copy bandwidth (first use of this device here; at most about 10 s of copies)");
  }
  run.probe_gbps = ensure_probe(store, plan.device_row, remote, options.reprobe, [&](long holder) {
    const std::string what =
        "waiting for " + (holder > 0 ? "process " + std::to_string(holder) : std::string("another process")) +
        ", which probes this device's copy bandwidth (Ctrl-C stops)";
    lane.board->update(lane.line, what, true);
    if (options.kind == "run" && options.progress) lane.board->message("varex: " + device.id + ": " + what);
  });
  lane.board->update(lane.line, "preparing the workload and its reference", true);
  // A tune with a budget in seconds prepares the small instance it may search on beside the workload (it
  // decides after the default whether it does: TuneSettings::small_instance).
  std::unique_ptr<SmallInstanceWorker> small;
  if (options.kind == "tune" && options.budget.kind == Budget::Kind::Seconds &&
      options.small_instance != TuneSettings::SmallInstance::Never) {
    if (auto instance = harness::small_instance_for(op, options.workload, device))
      small = std::make_unique<SmallInstanceWorker>(options.worker_executable, device, std::move(*instance));
  }
  remote.prepare(options.workload);
  // A wall-time budget counts everything from the command's start: the probe, the worker's start and the
  // preparation too (on a busy 2-core machine, a first probe and PoCL's compiles took minutes).
  const double spent_before_s =
      lane.preamble_s +
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lane_started).count();

  DeviceEvaluatorContext context;
  context.store = &store;
  context.remote = &remote;
  context.op = &op;
  context.space = &space;
  context.workload = options.workload;
  context.device_row = plan.device_row;
  context.session = run.session;
  context.settings = options.settings;
  context.timeout_seconds = options.timeout_seconds;
  context.probe_gbps = run.probe_gbps;
  context.small = small.get();
  DeviceEvaluator evaluator(context, std::move(resumed));
  SearchSpace search(space, options.seed);
  const auto strategy = strategy_of(options, search.space());
  TuneSettings settings;
  settings.budget = options.budget;
  settings.remeasure = options.remeasure;
  settings.objective = options.objective;
  settings.energy_proxy = options.kind == "tune" && options.strategy != "exhaustive";
  settings.cutoff = options.cutoff;
  // A sweep records every variant: it does not stop at the bound.
  if (!options.op->moves_all_its_bytes() || options.kind == "sweep") settings.at_bound = 0;
  settings.spent_before_s = spent_before_s;
  settings.warm_start = plan.warm_start;
  settings.small_instance = options.small_instance;
  run.outcome = run_tuning(
      *strategy, search, evaluator, settings,
      [&](const TuneOutcome& o, const Proposal&, const Evaluation& e) {
        run.last = e.m;
        const std::string best = o.history.empty() || !std::isfinite(o.history.back().best_value)
                                     ? ""
                                     : variants::describe(space.at(o.history.back().best_index));
        lane.board->update(lane.line,
                           describe_progress(options.budget, o, run.valid_variants, best, options.objective));
        if (interrupted() || *lane.abandon) throw harness::Interrupted();
        return true;
      });
  run.resumed_measurements = evaluator.resumed_used();
  if (run.outcome.small_evaluations > 0) run.small_workload = small->workload();
  run.small_error = evaluator.small_error();
  if (run.outcome.best) run.best_variant = harness::variant_id(op, device.backend, *run.outcome.best);
  // A run's session keeps its one measurement, and no outcome.
  store.end_session(
      run.session, "finished",
      options.kind == "run" ? std::nullopt : std::optional(outcome_of(run.outcome, run.best_variant)));
  run.status = "finished";
}

}  // namespace

void check_objective(const RunOptions& options, bool meters) {
  // Energy asked for where there is no meter would be measured as nothing (and stored as asked for), so an
  // objective's and --energy-ms's are refused alike: what asked for it, the device, the meters there are.
  std::string asked;
  if (options.objective != Objective::Time) {
    asked = "--objective " + to_string(options.objective);
    if (options.settings.energy_ms <= 0)
      throw UsageError(asked + " needs the energy measured: --energy-ms > 0");
  } else if (options.settings.energy_ms > 0) {
    asked = "--energy-ms";
  }
  if (asked.empty() || !meters) return;
  for (const DeviceInfo& d : options.devices) {
    if (!harness::energy_meter(d))
      throw UsageError(asked + ": " + d.id + " (" + d.name +
                       ") has no energy meter here (NVML for NVIDIA GPUs, RAPL for CPUs)");
  }
}

nlohmann::json session_settings(const RunOptions& options) {
  nlohmann::json settings{{"measure", options.settings.to_json()}};
  if (options.kind == "run") return settings;  // never resumed: every run is a session of its own
  settings["timeout_seconds"] = options.timeout_seconds;
  settings["pins"] = options.pins;
  if (options.shard) settings["shard"] = options.shard->to_string();
  settings["remeasure"] = options.remeasure;
  // Sessions by time, as all were before objectives, keep their settings (and are resumed as before).
  if (options.objective != Objective::Time) settings["objective"] = to_string(options.objective);
  if (options.cutoff > 0) settings["cutoff"] = options.cutoff;
  if (options.small_instance == TuneSettings::SmallInstance::Never) settings["small_instance"] = "never";
  if (options.small_instance == TuneSettings::SmallInstance::Always) settings["small_instance"] = "always";
  if (options.kind == "tune" && !options.warm_start) settings["warm_start"] = false;
  if (options.kind == "tune") {
    settings["budget"] = options.budget.to_string();
    settings["seed"] = options.seed;
  }
  return settings;
}

ProbeOutcome probe_device(results::Store& store, std::int64_t device_row, harness::RemoteDevice& remote,
                          bool force, const std::function<void(long holder)>& waiting) {
  // Probes of one physical device never overlap, across processes: each would see the bandwidth shared.
  const harness::DeviceLock lock(remote.device(), waiting);
  if (!lock.held()) throw harness::Interrupted();
  const std::optional<double> stored = store.probe_gbps(device_row);
  if (stored && !force) return {*stored, false, "", std::nullopt};
  varex::ProbeResult best = remote.probe();
  // Far below what the device measured before: something else used it meanwhile (another program, a
  // varex of an older version); measured again rather than stored.
  for (int again = 0; stored && best.gbps < kProbeDrop * *stored && again < 2; ++again) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const varex::ProbeResult p = remote.probe();
    if (p.gbps > best.gbps) best = p;
  }
  if (stored && best.gbps < kProbeDrop * *stored) {
    char note[200];
    std::snprintf(
        note, sizeof note,
        "three probes measured at most %.1f GB/s, under half the stored %.1f GB/s: kept the stored one "
        "(is the device busy?)",
        best.gbps, *stored);
    return {*stored, false, note, best};
  }
  store.set_probe(device_row, best);
  return {best.gbps, true, "", best};
}

double ensure_probe(results::Store& store, std::int64_t device_row, harness::RemoteDevice& remote, bool force,
                    const std::function<void(long holder)>& waiting) {
  return probe_device(store, device_row, remote, force, waiting).gbps;
}

namespace {

// Claims every device's session (plans[i].claim), its space and warm start: out[i] says what each holds. On
// failure every claim made is given back.
void claim_sessions(results::Store& store, const RunOptions& options,
                    const std::vector<WarmStartSource>& warm_sources,
                    const datasets::WorkloadClass& workload_class, std::vector<DeviceRun>& out,
                    std::vector<DevicePlan>& plans) {
  const harness::Operator& op = *options.op;
  try {
    for (std::size_t i = 0; i < options.devices.size(); ++i) {
      const DeviceInfo& device = options.devices[i];
      DeviceRun& run = out[i];
      DevicePlan& plan = plans[i];
      run.device = device;
      plan.space = space_of(options, device);
      run.valid_variants = plan.space->count_valid();
      plan.warm_start = warm_start_points(warm_sources, device, workload_class, *plan.space);
      plan.device_row = store.device(device);
      const results::SessionKey key{options.kind,          op.name(),        plan.device_row,
                                    options.workload.id(), options.strategy, session_settings(options)};
      const auto seed = options.kind == "tune" ? std::optional<std::int64_t>(options.seed) : std::nullopt;
      const std::string budget = options.kind == "run" ? "" : options.budget.to_string();
      while (true) {
        plan.claim = store.claim_session(key, options.fresh, seed, budget);
        if (plan.claim.kind != results::SessionClaim::Kind::Busy) break;
        const std::string who = describe_token(plan.claim.owner);
        if (!options.wait) {
          const std::int64_t busy = plan.claim.session;
          plan.claim = {};  // not ours: nothing to give back
          throw BusyError("the same " + options.kind + " of " + op.name() + " on " + device.id +
                          " (session " + std::to_string(busy) + ") is being run by " + who +
                          "; wait for it with --wait");
        }
        if (interrupted()) throw harness::Interrupted();
        std::this_thread::sleep_for(std::chrono::seconds(2));
      }
      if (plan.claim.kind == results::SessionClaim::Kind::Finished) {
        report_finished(store, plan.claim.session, options.objective, run);
      } else {
        store.set_session_variants(plan.claim.session, run.valid_variants);
      }
    }
  } catch (...) {
    for (const DevicePlan& p : plans) give_back(store, p.claim);
    throw;
  }
}

// What a lane's progress line says when it ends: its status, the best and how it was found.
std::string lane_line(const RunOptions& options, const DeviceRun& run) {
  std::string line = run.status;
  if (!run.outcome.best) return line;
  char best[64];
  std::snprintf(best, sizeof best, ": best %.4g %s ", run.outcome.best_value,
                objective_unit(options.objective));
  line += best + variants::describe(*run.outcome.best);
  if (run.outcome.stopped_at_bound && run.outcome.best_measurement)
    line +=
        " (stopped early: it moves its bytes at " +
        std::to_string(static_cast<int>(std::lround(100 * run.outcome.best_measurement->probe_fraction))) +
        "% of the copy probe, nothing faster is left to find)";
  if (run.small_workload)
    line += " (searched on a 1/" + std::to_string(run.outcome.small_divisor) + " instance, " +
            run.small_workload->describe() + ": " + std::to_string(run.outcome.small_evaluations) +
            " evaluations; its finalists measured again on the workload)";
  return line;
}

// What a lane that ended says besides its line: a small instance that could not be prepared, a budget that
// paid for the default alone.
void lane_messages(ProgressBoard& board, const RunOptions& options, const DeviceRun& run) {
  const std::string& device = run.device.id;
  if (!run.small_error.empty())
    board.message("varex: " + device + ": the small instance to search on could not be prepared (" +
                  varex::printable(run.small_error) + "): searched at full size");
  auto seconds = [](double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f s", s);
    return std::string(text);
  };
  if (run.outcome.needed_s > 0)
    board.message("varex: " + device + ": the budget of " + options.budget.to_string() +
                  " paid for the default variant alone (the probe, preparing the workload and measuring " +
                  "the default took " + seconds(run.outcome.spent_s) + "); a budget of about " +
                  seconds(run.outcome.needed_s) + " would search");
}

}  // namespace

std::vector<DeviceRun> run_sessions(results::Store& store, const RunOptions& options) {
  const harness::Operator& op = *options.op;
  check_objective(options);
  strategy_of(options,
              harness::space_for(op, options.devices.front(), options.workload));  // a bad name fails now
  store.ensure_operator(op.name(), op.description());
  store.ensure_workload(options.workload, op.workload_class(options.workload));
  std::vector<DeviceRun> out(options.devices.size());
  std::vector<DevicePlan> plans(options.devices.size());
  std::vector<std::string> labels;

  // What earlier sessions found best for this operator, read before any lane writes.
  std::vector<WarmStartSource> warm_sources;
  if (options.kind == "tune" && options.warm_start) warm_sources = recorded_bests(store, op.name());
  const datasets::WorkloadClass workload_class = op.workload_class(options.workload);

  // Every device's session is claimed before anything runs: a second identical command refuses (or waits,
  // with `wait`) before it measures anything, and two at once cannot both take one session.
  claim_sessions(store, options, warm_sources, workload_class, out, plans);
  for (const DeviceRun& run : out) labels.push_back(run.device.id);

  ProgressBoard board(labels, options.progress && options.kind != "run");
  std::atomic<bool> abandon{false};
  std::vector<DeviceInfo> to_run;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].status == "finished before") {
      board.done(i, "finished before");
    } else {
      to_run.push_back(options.devices[i]);
    }
  }
  const auto phases = plan_schedule(to_run, options.schedule);
  auto index_of = [&](const DeviceInfo& d) {
    for (std::size_t i = 0; i < options.devices.size(); ++i) {
      if (options.devices[i].id == d.id) return i;
    }
    throw std::logic_error("device not in the run: " + d.id);
  };
  // Lanes that run at the same time write through connections of their own; a lane alone uses `store`.
  const bool concurrent =
      std::any_of(phases.begin(), phases.end(), [](const Phase& p) { return p.lanes.size() > 1; });
  std::vector<bool> started(out.size(), false);
  const double preamble_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - options.started).count();
  try {
    run_schedule(phases, [&](const DeviceInfo& device) {
      const std::size_t i = index_of(device);
      DeviceRun& run = out[i];
      started[i] = true;
      std::optional<results::Store> own;
      if (concurrent) own.emplace(store.path(), results::Database::Mode::Existing);
      const LaneContext lane{own ? &*own : &store, &board, i, &abandon, preamble_s};
      try {
        run_device(lane, options, plans[i], run);
        board.done(i, lane_line(options, run));
        lane_messages(board, options, run);
      } catch (const RuntimeError& e) {
        lane.store->end_session(plans[i].claim.session, "failed");
        run.status = "failed";
        run.error = e.what();
        board.done(i, "failed");
        board.message("varex: " + device.id + " failed: " + varex::printable(e.what()));
      } catch (const harness::Interrupted&) {
        give_back(*lane.store, plans[i].claim);
        board.done(i, "interrupted");
        throw;
      } catch (...) {
        abandon = true;  // a usage error: the other lanes stop too
        // Nothing measured yet (bad input found while preparing): the session goes, as if never begun.
        lane.store->discard_session(plans[i].claim.session);
        throw;
      }
    });
  } catch (const UsageError&) {
    // Bad input found while preparing: the sessions go, and with them the workload and operator rows this
    // command wrote, so that a refusal leaves the database as it found it.
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!started[i]) give_back(store, plans[i].claim);
    }
    store.forget_unused(op.name(), options.workload.id());
    board.finish();
    throw;
  } catch (...) {
    // Sessions of devices that never started are given back as they were found.
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!started[i]) give_back(store, plans[i].claim);
    }
    board.finish();
    throw;
  }
  board.finish();
  return out;
}

}  // namespace varex::tuner
