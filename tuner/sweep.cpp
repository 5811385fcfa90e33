#include "tuner/sweep.hpp"

#include <unistd.h>

#include <cstdio>

#include "harness/errors.hpp"
#include "harness/interrupt.hpp"

namespace varex::tuner {

namespace {

void draw_progress(const DeviceSweep& s, std::size_t done) {
  char line[256];
  if (s.best) {
    std::snprintf(line, sizeof line, "\r%-10s %5zu/%-5zu ok %-5zu failed %-4zu best %.4f ms (%.1f GB/s)   ",
                  s.device.id.c_str(), done, s.variants, s.ok, s.failed, s.best->kernel.median, s.best->gbps);
  } else {
    std::snprintf(line, sizeof line, "\r%-10s %5zu/%-5zu ok %-5zu failed %-4zu   ", s.device.id.c_str(), done,
                  s.variants, s.ok, s.failed);
  }
  std::fputs(line, stderr);
  std::fflush(stderr);
}

}  // namespace

double ensure_probe(results::Store& store, std::int64_t device_row, harness::RemoteDevice& remote,
                    bool force) {
  if (!force) {
    if (const auto stored = store.probe_gbps(device_row)) return *stored;
  }
  const harness::ProbeResult probe = remote.probe();
  store.set_probe(device_row, probe);
  return probe.gbps;
}

namespace {

void sweep_device(results::Store& store, const SweepOptions& options, const variants::Space& space,
                  const std::vector<variants::Params>& points, DeviceSweep& result) {
  const harness::Operator& op = *options.op;
  const DeviceInfo& device = result.device;
  const bool progress = options.progress && isatty(STDERR_FILENO);
  const std::int64_t device_row = store.device(device);
  harness::RemoteDevice remote(options.worker_executable, device);
  result.probe_gbps = ensure_probe(store, device_row, remote, options.reprobe);
  remote.prepare(options.workload);

  const nlohmann::json settings{{"measure", options.settings.to_json()},
                                {"timeout_seconds", options.timeout_seconds},
                                {"pins", options.pins}};
  result.session =
      store.begin_session("sweep", op.name(), device_row, options.workload.id(), "exhaustive", settings);
  const std::string kernel_hash = harness::kernel_source(device.backend, op.kernel_family()).hash;
  try {
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (interrupted()) throw harness::Interrupted();
      const variants::Params& params = points[i];
      const std::string id = harness::variant_id(op, device.backend, params);
      store.ensure_variant(id, op.name(), device.backend, params, kernel_hash, space.compile_part(params));
      const harness::Measurement m = remote.measure(options.workload, params, options.settings,
                                                    result.probe_gbps, options.timeout_seconds);
      store.record(result.session, id, device_row, options.workload.id(), m);
      if (m.ok()) {
        ++result.ok;
        if (!result.best || m.kernel.median < result.best->kernel.median) {
          result.best = m;
          result.best_params = params;
          result.best_variant = id;
        }
      } else {
        ++result.failed;
      }
      if (progress) draw_progress(result, i + 1);
    }
  } catch (const harness::Interrupted&) {
    store.end_session(result.session, "interrupted");
    if (progress) std::fputs("\n", stderr);
    throw;
  }
  store.end_session(result.session, "finished");
  result.status = "finished";
  if (progress) std::fputs("\n", stderr);
}

}  // namespace

std::vector<DeviceSweep> sweep(results::Store& store, const SweepOptions& options) {
  const harness::Operator& op = *options.op;
  store.ensure_operator(op.name(), op.description());
  store.ensure_workload(options.workload);
  const bool progress = options.progress && isatty(STDERR_FILENO);

  std::vector<DeviceSweep> out;
  for (const DeviceInfo& device : options.devices) {
    const auto space = op.space({device, options.workload.rows()});
    const auto points = space.enumerate(options.pins);
    if (points.empty())
      throw UsageError(op.name() + ": no valid variant on " + device.id + " with the given --set values");

    DeviceSweep result;
    result.device = device;
    result.variants = points.size();
    try {
      sweep_device(store, options, space, points, result);
    } catch (const RuntimeError& e) {
      if (result.session) store.end_session(result.session, "failed");
      result.status = "failed";
      result.error = e.what();
      if (progress) std::fputs("\n", stderr);
      std::fprintf(stderr, "varex: %s failed: %s\n", device.id.c_str(), e.what());
    }
    out.push_back(std::move(result));
  }
  return out;
}

}  // namespace varex::tuner
