#pragma once
// A recorded sweep made up in the test: the selection space of a small OpenCL GPU with a time model that
// has structure (some tunables matter a lot, some little), measurement noise, and a few failed and
// wrong variants that are faster than everything else, to make sure they are never chosen.
#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "base/hash.hpp"
#include "operators/selection/selection_space.hpp"
#include "results/store.hpp"

namespace varex::test {

inline DeviceInfo synthetic_device() {
  DeviceInfo d;
  d.id = "ocl:0:0";
  d.backend = Backend::OpenCL;
  d.name = "Synthetic GPU";
  d.vendor = "Test";
  d.platform = "Test";
  d.driver = "1";
  d.type = "gpu";
  d.arch = "test";
  d.compute_units = 8;
  d.max_work_group = 256;
  d.global_mem = 1ULL << 32;
  d.host = "test";
  return d;
}

inline double model_ms(const variants::Params& p) {
  using variants::Value;
  double t = 1.0;
  t *= p.at("kernel") == Value{"overflow"} ? 1.0 : 1.6;
  const auto ept = variants::get_int(p, "ept");
  t *= ept == 16 ? 1.0 : ept == 8 ? 1.15 : ept == 32 ? 1.3 : ept == 4 ? 2.0 : 3.5;
  t *= 1.0 + 0.04 * std::log2(static_cast<double>(variants::get_int(p, "vec")));
  const auto local = variants::get_int_or(p, "local", 0);
  t *= local == 128 ? 1.0 : local == 0 ? 1.2 : 1.1;
  t *= p.at("grid") == Value{"cover"} ? 1.0 : 1.25;
  // Deterministic per-variant jitter of +-2%.
  const auto h = fnv1a(variants::canonical(p));
  return t * (0.98 + 0.04 * static_cast<double>(h % 1000) / 1000.0);
}

// Every valid variant of the space, measured by the model with 7 noisy repetitions.
inline std::vector<results::RecordedMeasurement> synthetic_recording(const variants::Space& space,
                                                                     std::uint32_t seed = 5) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<results::RecordedMeasurement> out;
  std::set<std::string> compiled;
  std::int64_t id = 0;
  for (const auto& p : space.enumerate()) {
    results::RecordedMeasurement r;
    r.id = ++id;
    r.params = p;
    r.variant_id = hex64(fnv1a(variants::canonical(p)));
    r.purpose = "search";
    varex::Measurement& m = r.m;
    const double t = model_ms(p);
    const auto h = fnv1a(variants::canonical(p)) % 97;
    if (h == 3) {
      m.status = varex::Status::WrongResult;  // faster than anything, and wrong
      m.samples_ms = {0.05 * t};
    } else if (h == 5) {
      m.status = varex::Status::LaunchError;
      m.error = "synthetic failure";
    } else {
      m.verified = true;
      for (int i = 0; i < 7; ++i) m.samples_ms.push_back(t * (1 + noise(rng)));
      m.bytes_moved = 4u << 20;
      m.gbps = static_cast<double>(m.bytes_moved) / (t * 1e6);
      m.probe_fraction = m.gbps / 1000.0;
    }
    m.kernel = summarize(m.samples_ms);
    // As an exhaustive sweep records it: the first variant of a program compiles it, the others reuse it.
    m.compile_cached = !compiled.insert(variants::canonical(space.compile_part(p))).second;
    m.compile_ms = m.compile_cached ? 0 : 50;
    m.wall_ms = m.compile_ms + 9 * t + 2;
    out.push_back(std::move(r));
  }
  return out;
}

// A power model under which time, energy and the energy-delay product have three different optima: 16
// elements per thread (the fastest) draw 40 % more power than the others, and grids that do not cover the
// input (25 % slower) 30 % less.
inline double model_watts(const variants::Params& p) {
  const double w = 300.0 * (variants::get_int(p, "ept") == 16 ? 1.4 : 1.0);
  return w * (p.at("grid") == variants::Value{"cover"} ? 1.0 : 0.7);
}

// The recording with the energy of 100 back-to-back repetitions of every timed measurement at the model's
// power, read by a counter of a 200th of it.
inline std::vector<results::RecordedMeasurement> with_energy(
    std::vector<results::RecordedMeasurement> recording) {
  for (auto& r : recording) {
    if (r.m.samples_ms.empty()) continue;
    varex::EnergyReading e;
    e.method = "nvml counter";
    e.reps = 100;
    e.seconds = e.reps * r.m.kernel.median / 1e3;
    e.joules = model_watts(r.params) * e.seconds;
    e.resolution_j = e.joules / 200;
    r.m.energy = e;
  }
  return recording;
}

}  // namespace varex::test

#include "operators/selection/selection.hpp"

namespace varex::test {

// Records the synthetic sweep (and, with `tune_budget` > 0, the first evaluations of it as a tuning
// session) in `store` for `device`, as varex itself would; with `energy`, its measurements carry energy
// (with_energy). Returns the sweep's session id.
inline std::int64_t record_synthetic(results::Store& store, const DeviceInfo& device, std::uint64_t rows,
                                     std::size_t tune_budget = 0, std::uint32_t seed = 5,
                                     bool energy = false) {
  operators::SelectionOperator op;
  const std::int64_t row = store.device(device);
  store.set_probe(row, {1000.0, "runtime_copy", {{"bytes", 1}}});
  store.ensure_operator(op.name(), op.description());
  datasets::WorkloadSpec workload;
  workload.op = "selection";
  workload.generator = "uniform_int32";
  workload.params = {{"rows", rows}, {"seed", 1}, {"selectivity", 0.5}};
  store.ensure_workload(workload, op.workload_class(workload));
  const auto space = op.space({device, rows});
  const auto recorded =
      energy ? with_energy(synthetic_recording(space, seed)) : synthetic_recording(space, seed);
  // As the tuner records a session: the search, then its three fastest verified variants measured again.
  auto record_session = [&](std::int64_t session, const std::vector<results::RecordedMeasurement>& searched) {
    std::vector<const results::RecordedMeasurement*> ok;
    for (const auto& r : searched) {
      const std::string id = harness::variant_id(op, device.backend, r.params);
      store.ensure_variant(id, "selection", device.backend, r.params, "hash", space.compile_part(r.params));
      store.record(session, id, row, workload.id(), r.m);
      if (r.m.ok()) ok.push_back(&r);
    }
    std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) { return a->m.kernel.median < b->m.kernel.median; });
    std::vector<const results::RecordedMeasurement*> finalists(
        ok.begin(), ok.begin() + std::min<std::size_t>(ok.size(), 3));
    if (energy) {
      // And the three most frugal, as a tune by energy re-measures them.
      std::sort(ok.begin(), ok.end(), [](auto* a, auto* b) {
        return a->m.energy->joules_per_rep() < b->m.energy->joules_per_rep();
      });
      for (std::size_t i = 0; i < ok.size() && i < 3; ++i) {
        if (std::find(finalists.begin(), finalists.end(), ok[i]) == finalists.end())
          finalists.push_back(ok[i]);
      }
    }
    for (const results::RecordedMeasurement* r : finalists) {
      store.record(session, harness::variant_id(op, device.backend, r->params), row, workload.id(), r->m, 0,
                   "remeasure");
    }
  };
  const auto sweep = store.begin_session("sweep", "selection", row, workload.id(), "exhaustive", {});
  record_session(sweep, recorded);
  store.end_session(sweep, "finished");
  if (tune_budget) {
    const auto tune =
        store.begin_session("tune", "selection", row, workload.id(), "random", {{"budget", "x"}}, 1, "10%");
    std::vector<results::RecordedMeasurement> searched;
    for (std::size_t i = 0; i < tune_budget && i < recorded.size(); ++i)
      searched.push_back(recorded[recorded.size() - 1 - i]);
    record_session(tune, searched);
    store.end_session(tune, "finished");
  }
  return sweep;
}

}  // namespace varex::test
