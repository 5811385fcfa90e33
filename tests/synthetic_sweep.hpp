#pragma once
// A recorded sweep made up in the test: the selection space of a small OpenCL GPU with a time model that
// has structure (some tunables matter a lot, some little), measurement noise, and a few failed and
// wrong variants that are faster than everything else, to make sure they are never chosen.
#include <cmath>
#include <random>

#include "harness/hash.hpp"
#include "results/store.hpp"
#include "variants/selection_space.hpp"

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
  t *= p.at("groups_per_cu") == Value{"cover"} ? 1.0 : 1.25;
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
  std::int64_t id = 0;
  for (const auto& p : space.enumerate()) {
    results::RecordedMeasurement r;
    r.id = ++id;
    r.params = p;
    r.variant_id = hex64(fnv1a(variants::canonical(p)));
    r.purpose = "search";
    harness::Measurement& m = r.m;
    const double t = model_ms(p);
    const auto h = fnv1a(variants::canonical(p)) % 97;
    if (h == 3) {
      m.status = harness::Status::WrongResult;  // faster than anything, and wrong
      m.samples_ms = {0.05 * t};
    } else if (h == 5) {
      m.status = harness::Status::LaunchError;
      m.error = "synthetic failure";
    } else {
      m.verified = true;
      for (int i = 0; i < 7; ++i) m.samples_ms.push_back(t * (1 + noise(rng)));
    }
    m.kernel = summarize(m.samples_ms);
    m.compile_ms = 50;
    m.wall_ms = 50 + 9 * t + 2;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace varex::test
