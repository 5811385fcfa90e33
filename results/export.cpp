#include "results/export.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <set>
#include <tuple>

#include "base/text.hpp"

namespace varex::results {

namespace {

std::string now_iso() {
  char buffer[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buffer;
}

// A C++ string literal.
std::string literal(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", static_cast<unsigned char>(c));
      out += b;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string value_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string params_literal(const nlohmann::json& params) {
  std::string out = "{";
  for (const auto& [name, value] : params.items()) {
    if (out.size() > 1) out += ", ";
    out.append("{").append(literal(name)).append(", ").append(literal(value_text(value))).append("}");
  }
  return out + "}";
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return out;
}

const char* invalidity(varex::Status s) {
  switch (s) {
    case varex::Status::Ok:
      return "correct";
    case varex::Status::CompileError:
      return "compile";
    case varex::Status::LaunchError:
      return "runtime";
    case varex::Status::Timeout:
      return "timeout";
    case varex::Status::WrongResult:
      return "correctness";
  }
  return "runtime";
}

}  // namespace

nlohmann::json profile_json(Store& store, const ExportFilter& filter, const DefaultParams& defaults,
                            const BuildOf& build_of) {
  // One entry per model (identical devices share it), workload and objective: the best of the devices' bests.
  struct Merged {
    BestRow best;
    std::int64_t measurements = 0;
    std::set<std::string> devices;  // the uids of the physical devices whose measurements competed
  };
  using Key = std::tuple<std::string, std::string, int>;  // operator, workload class, objective
  std::map<std::string, std::map<Key, Merged>> by_model;
  std::map<std::string, std::vector<DeviceInfo>> measured_on;
  std::vector<std::string> model_order;
  for (const Objective objective : filter.objectives_or_all()) {
    for (const BestRow& b : store.best(filter.best_query(objective))) {
      const std::string model = b.device.model_key();
      if (!by_model.count(model)) model_order.push_back(model);
      Merged& m = by_model[model][{b.op, b.workload_class.id(), static_cast<int>(objective)}];
      if (m.devices.empty() || b.value < m.best.value) m.best = b;
      m.measurements += b.measurements;
      m.devices.insert(b.device_uid);
      auto& on = measured_on[model];
      if (std::none_of(on.begin(), on.end(), [&](const DeviceInfo& d) { return d.uid() == b.device_uid; }))
        on.push_back(b.device);
    }
  }
  nlohmann::json devices = nlohmann::json::array();
  for (const std::string& model : model_order) {
    const DeviceInfo& first = measured_on[model].front();
    nlohmann::json d{{"backend", to_string(first.backend)},
                     {"vendor", first.vendor},
                     {"name", first.name},
                     {"arch", first.arch},
                     {"type", first.type},
                     {"driver", first.driver},
                     {"compute_units", first.compute_units},
                     {"global_mem", first.global_mem},
                     {"physical_devices", measured_on[model].size()},
                     {"measured_on", nlohmann::json::array()},
                     {"operators", nlohmann::json::object()}};
    for (const DeviceInfo& on : measured_on[model]) {
      d["measured_on"].push_back(
          {{"host", on.host}, {"id", on.id}, {"physical", on.physical.empty() ? "unknown" : on.physical}});
    }
    for (const auto& [key, m] : by_model[model]) {
      const BestRow& b = m.best;
      const std::string& op = std::get<0>(key);
      const nlohmann::json workload{{"rows", b.workload.rows()},
                                    {"class", b.workload_class.to_json()},
                                    {"generator", b.workload.generator},
                                    {"query", b.workload.query}};
      nlohmann::json entry{{"workload", workload},
                           {"params", variants::to_json(b.params)},
                           {"variant", b.variant_id},
                           {"kernel_ms", b.kernel_ms},
                           {"kernel_ci", {b.kernel_ci_low, b.kernel_ci_high}},
                           {"gbps", b.gbps},
                           {"probe_fraction", b.probe_fraction},
                           {"h2d_ms", b.h2d_ms},
                           {"d2h_ms", b.d2h_ms},
                           {"measured_at", b.measured_at},
                           {"method", b.method},
                           {"session", b.session},
                           {"measured_by", {{"host", b.device.host}, {"id", b.device.id}}},
                           {"physical_devices", m.devices.size()},
                           {"candidates", b.candidates},
                           {"candidate_measurements", m.measurements},
                           {"objective", to_string(b.objective)},
                           {"value", b.value}};
      if (b.energy_j) entry["energy_j"] = *b.energy_j;
      if (b.power_w) entry["power_w"] = *b.power_w;
      if (b.probe_gbps) entry["probe_gbps"] = *b.probe_gbps;
      for (const BestRow::RunnerUp& u : b.runners_up)
        entry["runners_up"].push_back({{"variant", u.variant_id},
                                       {"params", variants::to_json(u.params)},
                                       {"kernel_ms", u.kernel_ms},
                                       {"value", u.value}});
      if (const auto build = build_of ? build_of(b.op, b.device, b.params) : std::nullopt) {
        entry["family"] = build->family;
        entry["source_hash"] = b.kernel_hash;
        entry["defines"] = build->defines;
      }
      d["operators"][op].push_back(entry);
    }
    devices.push_back(std::move(d));
  }
  nlohmann::json defaults_json = nlohmann::json::object();
  for (const auto& [op, params] : defaults) {
    if (!filter.op || *filter.op == op) defaults_json[op] = params;
  }
  return {{"format", "varex-profile"},
          {"version", 5},
          {"generated_by", std::string("varex ") + VAREX_VERSION},
          {"generated_at", now_iso()},
          {"devices", devices},
          {"defaults", defaults_json}};
}

profile::DeviceKey profile_device(const DeviceInfo& d) {
  return {to_string(d.backend), d.vendor, d.name, d.arch, d.type, d.driver};
}

profile::Workload profile_workload(const datasets::WorkloadClass& c) {
  profile::Workload w;
  for (const auto& [key, value] : c.shape.items())
    w.shape[key] = value.is_string() ? value.get<std::string>() : value.dump();
  for (const auto& [key, value] : c.scale.items()) w.scale[key] = value.get<double>();
  for (const auto& [key, value] : c.kinds.items()) w.kinds[key] = value.get<std::string>();
  return w;
}

std::string profile_header(const nlohmann::json& profile, const std::string& ns) {
  std::string out =
      "// Generated by `varex export --format header` (" + profile.value("generated_at", "") +
      "); do not edit.\n// The tuned parameters as literals: include this header and call " + ns +
      "::profile().lookup(...).\n#pragma once\n#include <varex/profile.hpp>\n\nnamespace " + ns +
      " {\n\ninline const varex::profile::Profile& profile() {\n  static const varex::profile::Profile p(\n  "
      "    {\n";
  for (const auto& d : profile.at("devices")) {
    std::vector<std::string> parts;
    for (const char* field : {"backend", "vendor", "name", "arch", "type", "driver"})
      parts.push_back(literal(d.value(field, "")));
    const std::string key = "{" + join(parts, ", ") + "}";
    for (const auto& [op, entries] : d.at("operators").items()) {
      for (const auto& e : entries) {
        const nlohmann::json klass = e.at("workload").value("class", nlohmann::json::object());
        std::vector<std::string> shape, scale, kinds;
        // Named: a range-for over items() of a temporary would outlive it.
        const nlohmann::json shape_json = klass.value("shape", nlohmann::json::object());
        const nlohmann::json scale_json = klass.value("scale", nlohmann::json::object());
        const nlohmann::json kinds_json = klass.value("kinds", nlohmann::json::object());
        for (const auto& [k, v] : shape_json.items())
          shape.push_back("{" + literal(k) + ", " + literal(value_text(v)) + "}");
        for (const auto& [k, v] : kinds_json.items())
          kinds.push_back("{" + literal(k) + ", " + literal(value_text(v)) + "}");
        for (const auto& [k, v] : scale_json.items()) {
          char number[64];
          std::snprintf(number, sizeof number, "%.17g", v.get<double>());
          scale.push_back("{" + literal(k) + ", " + number + "}");
        }
        char timing[160], objective[200];
        std::snprintf(timing, sizeof timing, "%.17g, %.17g, %.17g", e.value("kernel_ms", 0.0),
                      e.value("gbps", 0.0), e.value("probe_fraction", 0.0));
        std::snprintf(objective, sizeof objective, "%s, %.17g, %.17g, %.17g",
                      literal(e.value("objective", "time")).c_str(),
                      e.value("value", e.value("kernel_ms", 0.0)), e.value("energy_j", 0.0),
                      e.value("power_w", 0.0));
        out += "          varex::profile::Entry{" + key + ", " + literal(op) + ", {{" + join(shape, ", ") +
               "}, {" + join(scale, ", ") + "}, {" + join(kinds, ", ") + "}}, " +
               params_literal(e.at("params")) + ", " + timing + ", " + literal(e.value("variant", "")) +
               ", " + literal(e.value("measured_at", "")) + ", " + literal(e.value("method", "")) + ", " +
               literal(e.value("family", "")) + ", " + literal(e.value("source_hash", "")) + ", " +
               params_literal(e.value("defines", nlohmann::json::object())) + ", {}, " + objective + "},\n";
      }
    }
  }
  out += "      },\n      {\n";
  const nlohmann::json defaults = profile.value("defaults", nlohmann::json::object());
  for (const auto& [op, params] : defaults.items()) {
    out += "          {" + literal(op) + ", " + params_literal(params) + "},\n";
  }
  out += "      });\n  return p;\n}\n\n}  // namespace " + ns + "\n";
  return out;
}

std::vector<T4Document> kt_t4(Store& store, const ExportFilter& filter) {
  std::map<std::string, T4Document> docs;
  for (const RecordedSession& s : store.sessions(std::nullopt, filter.op)) {
    if (!filter.admits(s.op, s.device_row)) continue;
    const std::string key = sanitize(s.op + "-" + s.device.id + "-" + s.device.host + "-" +
                                     std::to_string(s.workload.rows()) + "-" + s.workload.id());
    T4Document& doc = docs[key];
    if (doc.name.empty()) {
      doc.name = key + ".json";
      doc.results = {{"schema_version", "1.0.0"}, {"results", nlohmann::json::array()}};
      doc.metadata = {
          {"schema_version", "1.0.0"},
          {"metadata",
           {{"hardware",
             {{"hardware_description", nlohmann::json::array({s.device.to_json()})},
              {"operating_system", "Linux"}}},
            {"environment",
             {{"device_query", s.device.to_json()}, {"requirements", nlohmann::json::array()}}},
            {"varex",
             {{"operator", s.op}, {"workload", s.workload.to_json()}, {"version", VAREX_VERSION}}}}}};
    }
    // What the session minimised: time unless its settings name another objective.
    const std::string objective = s.settings.is_object() ? s.settings.value("objective", "time") : "time";
    for (const RecordedMeasurement& r : store.session_measurements(s.id)) {
      if (r.purpose != "search") continue;
      const varex::Measurement& m = r.m;
      nlohmann::json runtimes = nlohmann::json::array();
      double run_s = 0;
      for (double ms : m.samples_ms) {
        runtimes.push_back(ms / 1e3);
        run_s += ms / 1e3;
      }
      // Times in seconds: compilation, the timed runs, and the rest of varex's protocol (transfers,
      // verification, warm-up) as framework time.
      const double framework = std::max(0.0, m.cost_s() - m.compile_ms / 1e3 - run_s);
      nlohmann::json measurements = nlohmann::json::array();
      if (m.ok()) {
        measurements.push_back({{"name", "time"}, {"value", m.kernel.median}, {"unit", "ms"}});
        measurements.push_back({{"name", "bandwidth"}, {"value", m.gbps}, {"unit", "GB/s"}});
        // Timed once, far slower than the session's best then: the time is one repetition's.
        if (m.cut_off) measurements.push_back({{"name", "cut_off"}, {"value", 1}, {"unit", ""}});
        if (m.energy) {
          measurements.push_back({{"name", "energy"}, {"value", m.energy->joules_per_rep()}, {"unit", "J"}});
          measurements.push_back({{"name", "power"}, {"value", m.energy->watts()}, {"unit", "W"}});
        }
      }
      doc.results["results"].push_back({{"timestamp", r.created_at},
                                        {"configuration", variants::to_json(r.params)},
                                        {"objectives", nlohmann::json::array({objective})},
                                        {"times",
                                         {{"compilation_time", m.compile_ms / 1e3},
                                          {"runtimes", runtimes},
                                          {"framework", framework},
                                          {"search_algorithm", 0.0},
                                          {"validation", m.d2h_ms / 1e3}}},
                                        {"invalidity", invalidity(m.status)},
                                        {"correctness", m.verified ? 1 : 0},
                                        {"measurements", measurements}});
    }
  }
  std::vector<T4Document> out;
  for (auto& [_, doc] : docs) out.push_back(std::move(doc));
  return out;
}

}  // namespace varex::results
