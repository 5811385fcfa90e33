#include "results/import.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

#include "base/errors.hpp"
#include "base/stats.hpp"

namespace varex::results {

namespace {

using json = nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot read it");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json parse(const std::string& path, std::string text, bool kt_cache) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // Kernel Tuner appends each result to its cache as it goes and closes the braces at the end: a run
    // that was killed leaves them open.
    if (kt_cache) {
      while (!text.empty() && (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ','))
        text.pop_back();
      try {
        return json::parse(text + "}}");
      } catch (const json::exception&) {
      }
    }
    throw UsageError(path + ": not JSON: " + e.what());
  }
}

double number_or(const json& o, const char* key, double fallback) {
  return o.contains(key) && o[key].is_number() ? o[key].get<double>() : fallback;
}

// The measurement of one result: timed samples in ms, or the failure the tuner recorded.
varex::Measurement measurement(std::vector<double> samples_ms, double compile_ms, double wall_ms,
                               varex::Status status, const std::string& error) {
  varex::Measurement m;
  m.status = status;
  m.error = error;
  m.compile_ms = compile_ms;
  m.wall_ms = wall_ms;
  m.verified = false;  // whatever the other tuner checked, varex did not
  if (status == varex::Status::Ok) {
    m.samples_ms = std::move(samples_ms);
    m.kernel = summarize(m.samples_ms);
  }
  return m;
}

}  // namespace

ImportedRecords read_kt_cache(const std::string& path) {
  const json doc = parse(path, slurp(path), true);
  const auto refuse = [&](const std::string& what) {
    return UsageError(path + ": not a Kernel Tuner cache file: " + what);
  };
  if (!doc.is_object() || !doc.contains("cache") || !doc["cache"].is_object())
    throw refuse("no 'cache' object");
  if (!doc.contains("tune_params_keys") || !doc["tune_params_keys"].is_array())
    throw refuse("no 'tune_params_keys' list");
  ImportedRecords out;
  out.format = "kt-cache";
  out.device_name = doc.value("device_name", "");
  out.kernel_name = doc.value("kernel_name", "");
  if (doc.contains("problem_size")) {
    const json& p = doc["problem_size"];
    for (const json& n : p.is_array() ? p : json::array({p})) {
      if (n.is_number_unsigned() || (n.is_number_integer() && n.get<std::int64_t>() >= 0))
        out.problem_size.push_back(n.get<std::uint64_t>());
    }
  }
  std::vector<std::string> keys;
  for (const json& k : doc["tune_params_keys"]) {
    if (!k.is_string()) throw refuse("'tune_params_keys' holds names");
    keys.push_back(k.get<std::string>());
  }
  for (const auto& [key, entry] : doc["cache"].items()) {
    if (!entry.is_object() || !entry.contains("time")) throw refuse("entry '" + key + "' has no time");
    ImportedMeasurement r;
    r.configuration = json::object();
    for (const std::string& k : keys) {
      if (!entry.contains(k)) throw refuse("entry '" + key + "' has no value of '" + k + "'");
      r.configuration[k] = entry[k];
    }
    const double compile_ms = number_or(entry, "compile_time", 0);
    const double wall_ms = compile_ms + number_or(entry, "verification_time", 0) +
                           number_or(entry, "benchmark_time", 0) + number_or(entry, "framework_time", 0);
    const json& time = entry["time"];
    if (time.is_string()) {
      // Kernel Tuner's failures: a configuration the compiler refused, one that failed to run, and one the
      // device cannot launch (too many threads, too much shared memory).
      const std::string failure = time.get<std::string>();
      const varex::Status status =
          failure == "CompilationFailedConfig" ? varex::Status::CompileError : varex::Status::LaunchError;
      r.m = measurement({}, compile_ms, wall_ms, status, "Kernel Tuner: " + failure);
    } else if (time.is_number() && time.get<double>() < 1e19) {
      std::vector<double> samples;
      if (entry.contains("times") && entry["times"].is_array()) {
        for (const json& t : entry["times"]) {
          if (t.is_number()) samples.push_back(t.get<double>());
        }
      }
      if (samples.empty()) samples.push_back(time.get<double>());
      r.m = measurement(std::move(samples), compile_ms, wall_ms, varex::Status::Ok, "");
    } else {
      // Older caches mark a failed configuration with a time of 1e20.
      r.m = measurement({}, compile_ms, wall_ms, varex::Status::LaunchError, "Kernel Tuner: no time");
    }
    out.measurements.push_back(std::move(r));
  }
  return out;
}

// Milliseconds per unit of a T4 result's times. The schema says seconds, and varex's export writes them;
// Kernel Tuner (1.5) writes milliseconds. Where the result also has a 'time' measurement with its unit, the
// runtimes are read in whichever of the two puts their median nearer to it; else in seconds.
double t4_ms_per_unit(const json& result, const json& times) {
  std::vector<double> runtimes;
  if (times.contains("runtimes") && times["runtimes"].is_array()) {
    for (const json& t : times["runtimes"]) {
      if (t.is_number() && t.get<double>() > 0) runtimes.push_back(t.get<double>());
    }
  }
  if (runtimes.empty() || !result.contains("measurements") || !result["measurements"].is_array()) return 1e3;
  for (const json& x : result["measurements"]) {
    if (!x.is_object() || x.value("name", "") != "time" || !x.contains("value") || !x["value"].is_number())
      continue;
    const std::string unit = x.value("unit", "ms");
    const double time_ms = x["value"].get<double>() * (unit == "s" ? 1e3 : unit == "us" ? 1e-3 : 1.0);
    if (!(time_ms > 0)) break;
    std::nth_element(runtimes.begin(), runtimes.begin() + static_cast<std::ptrdiff_t>(runtimes.size() / 2),
                     runtimes.end());
    const double median = runtimes[runtimes.size() / 2];
    return std::fabs(std::log(median / time_ms)) < std::fabs(std::log(median * 1e3 / time_ms)) ? 1.0 : 1e3;
  }
  return 1e3;
}

ImportedRecords read_t4(const std::string& path) {
  const json doc = parse(path, slurp(path), false);
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array())
    throw UsageError(path + ": not a T4 results file: no 'results' list");
  ImportedRecords out;
  out.format = "t4";
  for (const json& r : doc["results"]) {
    if (!r.is_object() || !r.contains("configuration") || !r["configuration"].is_object())
      throw UsageError(path + ": not a T4 results file: a result without its 'configuration'");
    ImportedMeasurement m;
    m.configuration = r["configuration"];
    const json times = r.value("times", json::object());
    const double ms = t4_ms_per_unit(r, times);
    std::vector<double> samples;
    if (times.contains("runtimes") && times["runtimes"].is_array()) {
      for (const json& t : times["runtimes"]) {
        if (t.is_number()) samples.push_back(t.get<double>() * ms);
      }
    }
    const double compile_ms = number_or(times, "compilation_time", number_or(times, "compilation", 0)) * ms;
    const double wall_ms = compile_ms + std::accumulate(samples.begin(), samples.end(), 0.0) +
                           (number_or(times, "framework", 0) + number_or(times, "validation", 0)) * ms;
    // The time measurement, where the runtimes are missing.
    if (samples.empty() && r.contains("measurements") && r["measurements"].is_array()) {
      for (const json& x : r["measurements"]) {
        if (x.is_object() && x.value("name", "") == "time" && x.contains("value") && x["value"].is_number())
          samples.push_back(x["value"].get<double>() * (x.value("unit", "ms") == "s" ? 1e3 : 1.0));
      }
    }
    const std::string invalidity = r.value("invalidity", "correct");
    varex::Status status = varex::Status::Ok;
    if (invalidity == "compile") status = varex::Status::CompileError;
    if (invalidity == "runtime" || invalidity == "constraints") status = varex::Status::LaunchError;
    if (invalidity == "timeout") status = varex::Status::Timeout;
    if (invalidity == "correctness") status = varex::Status::WrongResult;
    if (status == varex::Status::Ok && samples.empty())
      throw UsageError(path + ": a correct result without a time (runtimes or a 'time' measurement)");
    m.m = measurement(std::move(samples), compile_ms, wall_ms, status,
                      status == varex::Status::Ok ? "" : "T4: " + invalidity);
    out.measurements.push_back(std::move(m));
  }
  return out;
}

}  // namespace varex::results
