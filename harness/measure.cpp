#include "harness/measure.hpp"

#include <chrono>
#include <map>

#include "harness/errors.hpp"

namespace varex::harness {

std::string to_string(Status status) {
  switch (status) {
    case Status::Ok:
      return "ok";
    case Status::CompileError:
      return "compile_error";
    case Status::LaunchError:
      return "launch_error";
    case Status::Timeout:
      return "timeout";
    case Status::WrongResult:
      return "wrong_result";
  }
  return "ok";
}

Status status_from_string(std::string_view text) {
  for (Status s :
       {Status::Ok, Status::CompileError, Status::LaunchError, Status::Timeout, Status::WrongResult}) {
    if (to_string(s) == text) return s;
  }
  throw UsageError("unknown measurement status '" + std::string(text) + "'");
}

nlohmann::json MeasureSettings::to_json() const {
  return {{"warmup", warmup},         {"min_reps", min_reps},
          {"max_reps", max_reps},     {"target_rel_ci", target_rel_ci},
          {"confidence", confidence}, {"max_rep_seconds", max_rep_seconds},
          {"baseline", baseline}};
}

MeasureSettings MeasureSettings::from_json(const nlohmann::json& j) {
  MeasureSettings s;
  s.warmup = j.value("warmup", s.warmup);
  s.min_reps = j.value("min_reps", s.min_reps);
  s.max_reps = j.value("max_reps", s.max_reps);
  s.target_rel_ci = j.value("target_rel_ci", s.target_rel_ci);
  s.confidence = j.value("confidence", s.confidence);
  s.max_rep_seconds = j.value("max_rep_seconds", s.max_rep_seconds);
  s.baseline = j.value("baseline", s.baseline);
  return s;
}

double Measurement::cost_s() const {
  if (wall_ms > 0) return wall_ms / 1e3;
  const double runs = static_cast<double>(samples_ms.size() + 2) * kernel.median;
  return (compile_ms + runs + d2h_ms) / 1e3;
}

nlohmann::json Measurement::to_json() const {
  nlohmann::json kernels_json = nlohmann::json::array();
  for (const auto& k : kernels) kernels_json.push_back({{"kernel", k.kernel}, {"ms", k.ms}});
  return {{"status", to_string(status)},
          {"error", error},
          {"compile_ms", compile_ms},
          {"compile_cached", compile_cached},
          {"wall_ms", wall_ms},
          {"h2d_ms", h2d_ms},
          {"d2h_ms", d2h_ms},
          {"samples_ms", samples_ms},
          {"kernel_ms", kernel.median},
          {"kernel_ci", {kernel.ci_low, kernel.ci_high}},
          {"kernel_mad", kernel.mad},
          {"kernels", kernels_json},
          {"cache_flushed", cache_flushed},
          {"bytes_moved", bytes_moved},
          {"gbps", gbps},
          {"probe_fraction", probe_fraction},
          {"rows", result.rows},
          {"checksum", result.checksum},
          {"verified", verified},
          {"baseline", baseline_json(baseline)}};
}

Measurement Measurement::from_json(const nlohmann::json& j) {
  Measurement m;
  m.status = status_from_string(j.at("status").get<std::string>());
  m.error = j.value("error", "");
  m.compile_ms = j.value("compile_ms", 0.0);
  m.compile_cached = j.value("compile_cached", false);
  m.wall_ms = j.value("wall_ms", 0.0);
  m.h2d_ms = j.value("h2d_ms", 0.0);
  m.d2h_ms = j.value("d2h_ms", 0.0);
  m.samples_ms = j.value("samples_ms", std::vector<double>{});
  m.kernel = summarize(m.samples_ms);
  for (const auto& k : j.value("kernels", nlohmann::json::array())) {
    m.kernels.push_back({k.at("kernel").get<std::string>(), k.at("ms").get<double>()});
  }
  m.cache_flushed = j.value("cache_flushed", false);
  m.bytes_moved = j.value("bytes_moved", std::uint64_t{0});
  m.gbps = j.value("gbps", 0.0);
  m.probe_fraction = j.value("probe_fraction", 0.0);
  m.result.rows = j.value("rows", std::uint64_t{0});
  m.result.checksum = j.value("checksum", std::uint64_t{0});
  m.verified = j.value("verified", false);
  m.baseline = baseline_from_json(j.value("baseline", nlohmann::json()));
  return m;
}

nlohmann::json baseline_json(const std::optional<BaselineTiming>& b) {
  if (!b) return nullptr;
  return {{"engine", b->engine}, {"threads", b->threads}, {"ms", b->ms}, {"verified", b->verified}};
}

std::optional<BaselineTiming> baseline_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  return BaselineTiming{j.value("engine", ""), j.value("threads", 0u), j.value("ms", 0.0),
                        j.value("verified", false)};
}

namespace {

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
    // The first result decides whether the variant's times count at all.
    run.poison();
    run.execute(params);
    const Collected first = run.collect();
    m.d2h_ms = first.d2h_ms;
    m.result = first.digest;
    m.verified = first.verified;
    if (!first.verified) {
      m.status = Status::WrongResult;
      m.error = first.mismatch;
      return m;
    }
    for (int i = 0; i < settings.warmup; ++i) run.execute(params);

    // An input that fits in the last-level cache would be measured from the cache: evict it before
    // every repetition by writing a buffer twice the cache's size.
    const std::uint64_t cache = engine.device().cache_bytes;
    m.cache_flushed = cache && run.working_set_bytes() < 2 * cache;
    std::map<std::string, std::vector<double>> per_kernel;
    std::vector<std::string> kernel_order;
    double spent_ms = 0;
    while (static_cast<int>(m.samples_ms.size()) < settings.max_reps) {
      if (m.cache_flushed) engine.flush_cache();
      const ExecutionTimes t = run.execute(params);
      m.samples_ms.push_back(t.total_ms);
      for (const KernelTiming& k : t.kernels) {
        auto& v = per_kernel[k.kernel];
        if (v.empty()) kernel_order.push_back(k.kernel);
        v.push_back(k.ms);
      }
      spent_ms += t.total_ms;
      if (static_cast<int>(m.samples_ms.size()) < settings.min_reps) continue;
      if (spent_ms > settings.max_rep_seconds * 1e3) break;
      if (summarize(m.samples_ms, settings.confidence).relative_ci() <= settings.target_rel_ci) break;
    }
    m.kernel = summarize(m.samples_ms, settings.confidence);
    for (const std::string& k : kernel_order) m.kernels.push_back({k, median(per_kernel[k])});
    if (settings.baseline) m.baseline = run.time_baseline();
  } catch (const LaunchError& e) {
    m.status = Status::LaunchError;
    m.error = e.what();
    if (e.fatal()) throw;
    return m;
  } catch (const RuntimeError& e) {
    // A driver call that fails during one variant (an allocation, a copy) fails that variant only.
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
