#include "base/measurement.hpp"

#include "base/errors.hpp"

namespace varex {

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

std::string to_string(Check check) {
  return check == Check::Device ? "device" : "host";
}

Check check_from_string(std::string_view text) {
  if (text == "host") return Check::Host;
  if (text == "device") return Check::Device;
  throw UsageError("unknown verification '" + std::string(text) + "'");
}

nlohmann::json MeasureSettings::to_json() const {
  nlohmann::json j{{"warmup", warmup},         {"min_reps", min_reps},
                   {"max_reps", max_reps},     {"target_rel_ci", target_rel_ci},
                   {"confidence", confidence}, {"max_rep_seconds", max_rep_seconds},
                   {"baseline", baseline}};
  // The per-request parts only where set: the JSON of a session's settings (its identity) stays as it was.
  if (check != Check::Host) j["check"] = to_string(check);
  if (cutoff_ms > 0) j["cutoff_ms"] = cutoff_ms;
  if (compare_in_full_below_ms > 0) j["compare_in_full_below_ms"] = compare_in_full_below_ms;
  if (energy_ms > 0) j["energy_ms"] = energy_ms;
  return j;
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
  s.check = check_from_string(j.value("check", std::string("host")));
  s.cutoff_ms = j.value("cutoff_ms", 0.0);
  s.compare_in_full_below_ms = j.value("compare_in_full_below_ms", 0.0);
  s.energy_ms = j.value("energy_ms", 0.0);
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
          {"host_check_ms", host_check_ms},
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
          {"checked", to_string(checked)},
          {"cut_off", cut_off},
          {"baseline", baseline_json(baseline)},
          {"energy", energy ? energy->to_json() : nlohmann::json(nullptr)}};
}

nlohmann::json EnergyReading::to_json() const {
  return {{"method", method},
          {"joules", joules},
          {"seconds", seconds},
          {"reps", reps},
          {"resolution_j", resolution_j},
          {"ticks", ticks},
          {"sm_clock_mhz", sm_clock_mhz},
          {"mem_clock_mhz", mem_clock_mhz}};
}

EnergyReading EnergyReading::from_json(const nlohmann::json& j) {
  EnergyReading e;
  e.method = j.at("method").get<std::string>();
  e.joules = j.at("joules").get<double>();
  e.seconds = j.at("seconds").get<double>();
  e.reps = j.at("reps").get<int>();
  e.resolution_j = j.value("resolution_j", 0.0);
  e.ticks = j.value("ticks", 0);
  e.sm_clock_mhz = j.value("sm_clock_mhz", 0.0);
  e.mem_clock_mhz = j.value("mem_clock_mhz", 0.0);
  return e;
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
  m.host_check_ms = j.value("host_check_ms", 0.0);
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
  m.checked = check_from_string(j.value("checked", std::string("host")));
  m.cut_off = j.value("cut_off", false);
  m.baseline = baseline_from_json(j.value("baseline", nlohmann::json()));
  if (const auto e = j.find("energy"); e != j.end() && e->is_object())
    m.energy = EnergyReading::from_json(*e);
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

}  // namespace varex
