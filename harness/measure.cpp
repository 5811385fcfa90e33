#include "harness/measure.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "base/errors.hpp"
#include "harness/energy.hpp"
#include "harness/fault_injection.hpp"

namespace varex::harness {

namespace {

// The energy of repetitions run back to back (no cache flushes between them: a flush's own writes would be
// counted), from the device's meter, made once per process; nothing where the device has none.
std::optional<EnergyReading> energy_of(Engine& engine, PreparedRun& run, const variants::Params& params,
                                       const MeasureSettings& settings, double rep_ms) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<EnergyMeter>> meters;
  std::lock_guard lock(mutex);
  const DeviceInfo& device = engine.device();
  auto it = meters.find(device.uid());
  if (it == meters.end()) it = meters.emplace(device.uid(), energy_meter(device)).first;
  if (!it->second) return std::nullopt;
  return measure_energy(
      *it->second, [&] { run.execute(params); }, rep_ms, settings.energy_ms);
}

// Collects the result, adding the time of a comparison in full on the host to the measurement's.
Collected collect_timed(PreparedRun& run, Check check, Measurement& m) {
  const auto start = std::chrono::steady_clock::now();
  Collected c = run.collect(check);
  if (c.checked == Check::Host)
    m.host_check_ms +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return c;
}

Measurement measure_untimed(Engine& engine, PreparedRun& run, const variants::Params& params,
                            const MeasureSettings& settings, double probe_gbps) {
  Measurement m;
  m.h2d_ms = run.h2d_ms();
  m.bytes_moved = run.bytes_moved();
  try {
    const CompileInfo compiled = run.compile(params);
    m.compile_ms = compiled.ms;
    m.compile_cached = compiled.cached;
  } catch (const CompileError& e) {
    m.status = Status::CompileError;
    m.error = e.what();
    return m;
  }
  try {
    // The first result decides whether the variant's times count at all. A digest computed on the device
    // that differs from the reference's is compared in full, which names the mismatch (and is the judge).
    strike_if_injected(params, engine);
    run.poison();
    const ExecutionTimes verified_run = run.execute(params);
    Collected first = collect_timed(run, settings.check, m);
    if (!first.verified && first.checked == Check::Device) first = collect_timed(run, Check::Host, m);
    m.checked = first.checked;
    m.d2h_ms = first.d2h_ms;
    m.result = first.digest;
    m.verified = first.verified;
    if (!first.verified) {
      m.status = Status::WrongResult;
      m.error = first.mismatch;
      return m;
    }
    // A loser far behind the incumbent is timed once: a verified run already slower than the cut-off is that
    // one time (a 17 s join variant's verified run and first repetition took 34 s of a 60 s tune), and no
    // repetition follows a first one that is.
    const bool cutting = settings.cutoff_ms > 0;
    const bool cut_at_verification = cutting && verified_run.total_ms > settings.cutoff_ms;
    if (!cut_at_verification) {
      for (int i = 0; i < settings.warmup; ++i) run.execute(params);
    }

    // An input that fits in the last-level cache would be measured from the cache: evict it before
    // every repetition by writing a buffer twice the cache's size.
    const std::uint64_t cache = engine.device().cache_bytes;
    m.cache_flushed = cache && run.working_set_bytes() < 2 * cache;
    std::map<std::string, std::vector<double>> per_kernel;
    std::vector<std::string> kernel_order;
    double spent_ms = 0;
    while (static_cast<int>(m.samples_ms.size()) < settings.max_reps) {
      if (m.cache_flushed && !cut_at_verification) engine.flush_cache();
      const ExecutionTimes t = cut_at_verification ? verified_run : run.execute(params);
      m.samples_ms.push_back(t.total_ms);
      for (const KernelTiming& k : t.kernels) {
        auto& v = per_kernel[k.kernel];
        if (v.empty()) kernel_order.push_back(k.kernel);
        v.push_back(k.ms);
      }
      spent_ms += t.total_ms;
      if (cutting && m.samples_ms.size() == 1 && t.total_ms > settings.cutoff_ms) {
        m.cut_off = true;
        break;
      }
      if (static_cast<int>(m.samples_ms.size()) < settings.min_reps) continue;
      if (spent_ms > settings.max_rep_seconds * 1e3) break;
      if (summarize(m.samples_ms, settings.confidence).relative_ci() <= settings.target_rel_ci) break;
    }
    m.kernel = summarize(m.samples_ms, settings.confidence);
    for (const std::string& k : kernel_order) m.kernels.push_back({k, median(per_kernel[k])});
    if (m.checked == Check::Device && !m.cut_off && m.kernel.median < settings.compare_in_full_below_ms) {
      run.poison();
      run.execute(params);
      const Collected full = collect_timed(run, Check::Host, m);
      m.checked = Check::Host;
      if (!full.verified) {
        m.status = Status::WrongResult;
        m.verified = false;
        m.error = full.mismatch;
        return m;
      }
    }
    if (settings.energy_ms > 0 && !m.cut_off && m.kernel.median < settings.energy_below_ms)
      m.energy = energy_of(engine, run, params, settings, m.kernel.median);
    if (settings.baseline) m.baseline = run.time_baseline();
  } catch (const LaunchError& e) {
    m.status = Status::LaunchError;
    m.error = e.what();
    if (e.fatal()) throw;
    return m;
  } catch (const UsageError&) {
    throw;  // the user's input, not the variant's failure
  } catch (const std::exception& e) {
    // A driver call that fails during one variant (an allocation, a copy), or a vendor library's exception,
    // fails that variant only. Whether the device is still usable afterwards is the worker's question.
    m.status = Status::LaunchError;
    m.error = e.what();
    return m;
  }
  if (m.kernel.median > 0) m.gbps = static_cast<double>(m.bytes_moved) / (m.kernel.median * 1e6);
  if (probe_gbps > 0) m.probe_fraction = m.gbps / probe_gbps;
  return m;
}

}  // namespace

Measurement measure(Engine& engine, PreparedRun& run, const variants::Params& params,
                    const MeasureSettings& settings, double probe_gbps) {
  const auto start = std::chrono::steady_clock::now();
  Measurement m = measure_untimed(engine, run, params, settings, probe_gbps);
  m.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace varex::harness
