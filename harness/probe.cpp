#include "harness/probe.hpp"

#include <algorithm>
#include <vector>

#include "base/errors.hpp"
#include "base/stats.hpp"

namespace varex::harness {

namespace {

constexpr int kReps = 7;
constexpr int kMinReps = 3;
// The probe stays short where copies are slow (PoCL on a busy 2-core machine whose cache is reported as
// hundreds of MiB took 61 to 140 s): a method stops after kMinReps once it has taken kMethodMs, and the
// methods after the first stop once the probe has taken kProbeMs. A GPU's copies take milliseconds.
constexpr double kMethodMs = 2000;
constexpr double kProbeMs = 8000;

template <typename Run>
double median_ms(Run run, double& spent_ms) {
  spent_ms += run();  // warm-up
  std::vector<double> ms;
  double method_ms = 0;
  for (int i = 0; i < kReps && (i < kMinReps || method_ms < kMethodMs); ++i) {
    ms.push_back(run());
    method_ms += ms.back();
  }
  spent_ms += method_ms;
  return median(ms);
}

}  // namespace

ProbeResult probe_bandwidth(Engine& engine) {
  const DeviceInfo& device = engine.device();
  // Beyond the cache, within the allocation limits: source and destination together are four times the
  // last-level cache. (Eight times each took minutes on a 2-core VM that reports its host's 260 MiB L3.)
  // A reported cache may understate (NVIDIA's OpenCL reports a few MiB of L2), so at least 256 MiB each;
  // a cache the user declared (VAREX_LLC_BYTES) is taken at its word, and a small one keeps the probe
  // small: the tests declare 8 MiB, and a probe of 256 MiB took 12 s of every fresh database there.
  std::uint64_t bytes = 2 * device.cache_bytes;
  if (!device.cache_declared) bytes = std::max<std::uint64_t>(bytes, 256ULL << 20);
  if (device.max_alloc) bytes = std::min(bytes, device.max_alloc);
  if (device.global_mem) bytes = std::min(bytes, device.global_mem / 4);
  bytes = bytes / 4096 * 4096;
  auto src = engine.allocate(bytes);
  auto dst = engine.allocate(bytes);
  engine.fill(*src, 0x5A3C96E1u, 0, bytes)->elapsed_ms();

  ProbeResult result;
  result.details = {{"bytes", bytes}, {"methods", nlohmann::json::array()}};
  auto record = [&](const std::string& method, double ms) {
    const double gbps = 2.0 * static_cast<double>(bytes) / (ms * 1e6);
    result.details["methods"].push_back({{"method", method}, {"ms", ms}, {"gbps", gbps}});
    if (gbps > result.gbps) {
      result.gbps = gbps;
      result.method = method;
    }
  };

  double spent_ms = 0;
  record("runtime_copy", median_ms([&] { return engine.copy(*dst, *src, bytes)->elapsed_ms(); }, spent_ms));

  const Program& program = engine.compile(kernel_source(device.backend, "probe"), {});
  const auto n = static_cast<std::uint32_t>(bytes / 16);
  const std::vector<KernelArg> args{KernelArg::of(*src), KernelArg::of(*dst), KernelArg::of(n)};
  const std::uint64_t units = std::max<std::uint32_t>(device.compute_units, 1);
  auto try_kernel = [&](const std::string& kernel, const LaunchShape& shape, const std::string& label) {
    if (spent_ms > kProbeMs) return;
    try {
      record(label,
             median_ms([&] { return engine.launch(program, kernel, shape, args)->elapsed_ms(); }, spent_ms));
    } catch (const LaunchError& e) {
      if (e.fatal()) throw;
    }
  };
  for (std::uint64_t local : {256, 1024}) {
    if (local > device.max_work_group) continue;
    try_kernel("copy_cover", {(n + local - 1) / local * local, local},
               "copy_cover local=" + std::to_string(local));
    for (std::uint64_t groups_per_cu : {8, 64}) {
      try_kernel(
          "copy_strided", {groups_per_cu * units * local, local},
          "copy_strided local=" + std::to_string(local) + " groups_per_cu=" + std::to_string(groups_per_cu));
    }
  }
  if (result.gbps <= 0) throw RuntimeError("the bandwidth probe measured nothing on " + device.id);
  return result;
}

}  // namespace varex::harness
