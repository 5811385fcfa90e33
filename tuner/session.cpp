#include "tuner/session.hpp"

#include <unistd.h>

#include <cstdio>

#include "harness/errors.hpp"
#include "harness/interrupt.hpp"
#include "tuner/device_evaluator.hpp"

namespace varex::tuner {

namespace {

void draw_progress(const DeviceRun& run, const TuneOutcome& o, std::uint64_t total) {
  char line[256];
  const double best = o.history.empty() ? 0 : o.history.back().best_ms;
  std::snprintf(line, sizeof line,
                "\r%-10s %6lld/%-6llu evaluated  %7.1f s  ok %-5zu failed %-4zu best %.4f ms   ",
                run.device.id.c_str(), static_cast<long long>(o.evaluations),
                static_cast<unsigned long long>(total), o.spent_s, o.ok, o.failed, best);
  std::fputs(line, stderr);
  std::fflush(stderr);
}

results::SessionOutcome outcome_of(const TuneOutcome& o, const std::string& best_variant) {
  return {best_variant, o.best_ms, o.evaluations, o.spent_s};
}

void run_device(results::Store& store, const RunOptions& options, DeviceRun& run) {
  const harness::Operator& op = *options.op;
  const DeviceInfo& device = run.device;
  const bool progress = options.progress && isatty(STDERR_FILENO);
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
  run.probe_gbps = ensure_probe(store, device_row, remote, options.reprobe);
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
    run.outcome = run_tuning(*strategy, search, evaluator, settings,
                             [&](const TuneOutcome& o, const Proposal&, const Evaluation&) {
                               if (progress) draw_progress(run, o, run.valid_variants);
                               if (interrupted()) throw harness::Interrupted();
                               return true;
                             });
  } catch (const harness::Interrupted&) {
    store.end_session(run.session, "interrupted");
    if (progress) std::fputs("\n", stderr);
    throw;
  }
  if (progress) std::fputs("\n", stderr);
  run.resumed_measurements = evaluator.resumed_used();
  if (run.outcome.best) run.best_variant = harness::variant_id(op, device.backend, *run.outcome.best);
  store.end_session(run.session, "finished", outcome_of(run.outcome, run.best_variant));
  run.status = "finished";
}

}  // namespace

nlohmann::json session_settings(const RunOptions& options) {
  nlohmann::json settings{{"measure", options.settings.to_json()},
                          {"timeout_seconds", options.timeout_seconds},
                          {"pins", options.pins}};
  if (options.kind == "tune") {
    settings["budget"] = options.budget.to_string();
    settings["seed"] = options.seed;
    settings["remeasure"] = options.remeasure;
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
  store.ensure_workload(options.workload);
  make_strategy(options.strategy,
                op.space({options.devices.front(), options.workload.rows()}));  // a bad name fails now
  std::vector<DeviceRun> out;
  for (const DeviceInfo& device : options.devices) {
    DeviceRun run;
    run.device = device;
    try {
      run_device(store, options, run);
    } catch (const RuntimeError& e) {
      if (run.session) store.end_session(run.session, "failed");
      run.status = "failed";
      run.error = e.what();
      std::fprintf(stderr, "%svarex: %s failed: %s\n", options.progress && isatty(STDERR_FILENO) ? "\n" : "",
                   device.id.c_str(), e.what());
    }
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace varex::tuner
