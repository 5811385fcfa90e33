#include "tuner/session.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "harness/errors.hpp"
#include "harness/interrupt.hpp"
#include "tuner/device_evaluator.hpp"
#include "tuner/progress.hpp"

namespace varex::tuner {

namespace {

results::SessionOutcome outcome_of(const TuneOutcome& o, const std::string& best_variant) {
  return {best_variant, o.best_ms, o.evaluations, o.spent_s};
}

// Everything one device's session needs besides its own run: its connection to the store, the shared
// display and the signal that another lane failed.
struct LaneContext {
  results::Store* store = nullptr;
  ProgressBoard* board = nullptr;
  std::size_t line = 0;
  const std::atomic<bool>* abandon = nullptr;
};

void run_device(const LaneContext& lane, const RunOptions& options, DeviceRun& run) {
  results::Store& store = *lane.store;
  const harness::Operator& op = *options.op;
  const DeviceInfo& device = run.device;
  const variants::Space space = op.space({device, options.workload.rows()}).restricted(options.pins);
  run.valid_variants = space.count_valid();
  const std::int64_t device_row = store.device(device);
  const results::SessionKey key{options.kind,          op.name(),        device_row,
                                options.workload.id(), options.strategy, session_settings(options)};

  // The same command before: a finished session is reported, an interrupted one continued.
  std::vector<results::RecordedMeasurement> resumed;
  if (!options.fresh) {
    if (const auto previous = store.latest_session(key)) {
      if (previous->status == "finished") {
        run.session = previous->id;
        run.status = "finished before";
        if (previous->outcome) {
          run.outcome.evaluations = previous->outcome->evaluations;
          run.outcome.spent_s = previous->outcome->spent_seconds;
          run.outcome.best_ms = previous->outcome->best_kernel_ms;
          run.best_variant = previous->outcome->best_variant;
          for (const auto& r : store.session_measurements(previous->id)) {
            if (r.variant_id == run.best_variant) run.outcome.best = r.params;
          }
        }
        return;
      }
      run.session = previous->id;
      resumed = store.session_measurements(previous->id);
    }
  }

  harness::RemoteDevice remote(options.worker_executable, device);
  if (options.reprobe || !store.probe_gbps(device_row))
    lane.board->update(lane.line, "probing the copy bandwidth (first use of this device; a few seconds)",
                       true);
  run.probe_gbps = ensure_probe(store, device_row, remote, options.reprobe);
  lane.board->update(lane.line, "preparing the workload and its reference", true);
  remote.prepare(options.workload);
  if (run.session) {
    store.reopen_session(run.session);
  } else {
    run.session = store.begin_session(
        key, options.kind == "tune" ? std::optional<std::int64_t>(options.seed) : std::nullopt,
        options.budget.to_string());
  }

  DeviceEvaluatorContext context{&store,        &remote,          &op,
                                 &space,        options.workload, device_row,
                                 run.session,   options.settings, options.timeout_seconds,
                                 run.probe_gbps};
  DeviceEvaluator evaluator(context, std::move(resumed));
  SearchSpace search(space, options.seed);
  const auto strategy = make_strategy(options.strategy, search.space());
  const TuneSettings settings{options.budget, options.remeasure};
  try {
    run.outcome = run_tuning(
        *strategy, search, evaluator, settings,
        [&](const TuneOutcome& o, const Proposal&, const Evaluation&) {
          const std::string best = o.history.empty() || !std::isfinite(o.history.back().best_ms)
                                       ? ""
                                       : variants::describe(space.at(o.history.back().best_index));
          lane.board->update(lane.line, describe_progress(options.budget, o, run.valid_variants, best));
          if (interrupted() || *lane.abandon) throw harness::Interrupted();
          return true;
        });
  } catch (const harness::Interrupted&) {
    store.end_session(run.session, "interrupted");
    lane.board->update(lane.line, "interrupted", true);
    throw;
  } catch (const RuntimeError&) {
    throw;  // the device failed: run_sessions closes the session as failed
  } catch (...) {
    store.end_session(run.session, "interrupted");  // another lane's usage error stopped this one
    throw;
  }
  run.resumed_measurements = evaluator.resumed_used();
  if (run.outcome.best) run.best_variant = harness::variant_id(op, device.backend, *run.outcome.best);
  store.end_session(run.session, "finished", outcome_of(run.outcome, run.best_variant));
  run.status = "finished";
}

}  // namespace

nlohmann::json session_settings(const RunOptions& options) {
  nlohmann::json settings{{"measure", options.settings.to_json()},
                          {"timeout_seconds", options.timeout_seconds},
                          {"pins", options.pins},
                          {"remeasure", options.remeasure}};
  if (options.kind == "tune") {
    settings["budget"] = options.budget.to_string();
    settings["seed"] = options.seed;
  }
  return settings;
}

double ensure_probe(results::Store& store, std::int64_t device_row, harness::RemoteDevice& remote,
                    bool force) {
  if (!force) {
    if (const auto stored = store.probe_gbps(device_row)) return *stored;
  }
  const harness::ProbeResult probe = remote.probe();
  store.set_probe(device_row, probe);
  return probe.gbps;
}

std::vector<DeviceRun> run_sessions(results::Store& store, const RunOptions& options) {
  const harness::Operator& op = *options.op;
  store.ensure_operator(op.name(), op.description());
  store.ensure_workload(options.workload, op.workload_class(options.workload));
  make_strategy(options.strategy,
                op.space({options.devices.front(), options.workload.rows()}));  // a bad name fails now
  std::vector<DeviceRun> out(options.devices.size());
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < options.devices.size(); ++i) {
    out[i].device = options.devices[i];
    labels.push_back(options.devices[i].id);
  }
  ProgressBoard board(labels, options.progress);
  std::atomic<bool> abandon{false};
  const auto phases = plan_schedule(options.devices, options.schedule);
  auto index_of = [&](const DeviceInfo& d) {
    for (std::size_t i = 0; i < options.devices.size(); ++i) {
      if (options.devices[i].id == d.id) return i;
    }
    throw std::logic_error("device not in the run: " + d.id);
  };
  // Lanes that run at the same time write through connections of their own; a lane alone uses `store`.
  const bool concurrent =
      std::any_of(phases.begin(), phases.end(), [](const Phase& p) { return p.lanes.size() > 1; });
  run_schedule(phases, [&](const DeviceInfo& device) {
    const std::size_t i = index_of(device);
    DeviceRun& run = out[i];
    std::optional<results::Store> own;
    if (concurrent) own.emplace(store.path(), results::Database::Mode::Existing);
    const LaneContext lane{own ? &*own : &store, &board, i, &abandon};
    try {
      run_device(lane, options, run);
      std::string line = run.status;
      if (run.outcome.best) {
        char best[64];
        std::snprintf(best, sizeof best, ": best %.4f ms ", run.outcome.best_ms);
        line += best + variants::describe(*run.outcome.best);
      }
      board.update(i, line, true);
    } catch (const RuntimeError& e) {
      if (run.session) lane.store->end_session(run.session, "failed");
      run.status = "failed";
      run.error = e.what();
      board.update(i, "failed", true);
      board.message("varex: " + device.id + " failed: " + e.what());
    } catch (const harness::Interrupted&) {
      throw;
    } catch (...) {
      abandon = true;  // a usage error: the other lanes stop too
      throw;
    }
  });
  board.finish();
  return out;
}

}  // namespace varex::tuner
