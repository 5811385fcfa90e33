#pragma once
// Loading a JSON profile written by `varex export --format json` (schema: docs/PROFILE.md). Needs
// nlohmann/json besides the standard library.
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "varex/profile.hpp"

namespace varex::profile {

// The newest profile format this header reads. Version 4 lacks the kinds of the scale keys (Workload::kinds);
// version 3 also each entry's objective (all are time entries); version 2 also each entry's kernel family,
// source hash and defines; version 1 also describes workloads by rows and selectivity only. All are still
// read.
inline constexpr int kProfileVersion = 5;

inline Params params_from_json(const nlohmann::json& j) {
  Params p;
  for (const auto& [name, value] : j.items())
    p[name] = value.is_string() ? value.get<std::string>() : value.dump();
  return p;
}

inline Profile load_profile(const nlohmann::json& j) {
  if (j.value("format", "") != "varex-profile") throw std::runtime_error("not a varex profile");
  const int version = j.value("version", 0);
  if (version < 1 || version > kProfileVersion) {
    throw std::runtime_error("varex profile version " + std::to_string(version) +
                             " is not supported (this reader: " + std::to_string(kProfileVersion) + ")");
  }
  std::vector<Entry> entries;
  for (const auto& d : j.at("devices")) {
    DeviceKey key;
    key.backend = d.value("backend", "");
    key.vendor = d.value("vendor", "");
    key.name = d.value("name", "");
    key.arch = d.value("arch", "");
    key.type = d.value("type", "");
    key.driver = d.value("driver", "");
    for (const auto& [op, list] : d.at("operators").items()) {
      for (const auto& e : list) {
        Entry entry;
        entry.device = key;
        entry.op = op;
        const nlohmann::json& w = e.at("workload");
        if (const auto c = w.find("class"); c != w.end()) {
          // Named: a range-for over items() of a temporary would outlive it.
          const nlohmann::json shape = c->value("shape", nlohmann::json::object());
          const nlohmann::json scale = c->value("scale", nlohmann::json::object());
          for (const auto& [key, value] : shape.items())
            entry.workload.shape[key] = value.is_string() ? value.get<std::string>() : value.dump();
          for (const auto& [key, value] : scale.items()) entry.workload.scale[key] = value.get<double>();
          const nlohmann::json kinds = c->value("kinds", nlohmann::json::object());
          for (const auto& [key, value] : kinds.items()) entry.workload.kinds[key] = value.get<std::string>();
        } else {
          // Version 1: rows, and selectivity where the operator has one.
          entry.workload.scale["rows"] = w.value("rows", 0.0);
          if (w.contains("selectivity")) entry.workload.scale["selectivity"] = w["selectivity"].get<double>();
        }
        entry.params = params_from_json(e.at("params"));
        entry.kernel_ms = e.value("kernel_ms", 0.0);
        entry.gbps = e.value("gbps", 0.0);
        entry.probe_fraction = e.value("probe_fraction", 0.0);
        entry.variant = e.value("variant", "");
        entry.measured_at = e.value("measured_at", "");
        entry.method = e.value("method", "");
        entry.family = e.value("family", "");
        entry.source_hash = e.value("source_hash", "");
        if (const auto defines = e.find("defines"); defines != e.end())
          entry.defines = params_from_json(*defines);
        if (const auto runners = e.find("runners_up"); runners != e.end())
          for (const auto& u : *runners) entry.runners_up.push_back(params_from_json(u.at("params")));
        entry.objective = e.value("objective", "time");
        entry.value = e.value("value", entry.kernel_ms);
        entry.energy_j = e.value("energy_j", 0.0);
        entry.power_w = e.value("power_w", 0.0);
        entries.push_back(std::move(entry));
      }
    }
  }
  std::map<std::string, Params> defaults;
  const nlohmann::json defaults_json = j.value("defaults", nlohmann::json::object());
  for (const auto& [op, params] : defaults_json.items()) {
    defaults[op] = params_from_json(params);
  }
  return Profile(std::move(entries), std::move(defaults));
}

// std::runtime_error, one line naming the file, for a file that cannot be read or is not a varex profile
// (not JSON, or JSON of another shape), so that a consumer can report it and go on with its defaults.
inline Profile load_profile_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read profile " + path);
  try {
    return load_profile(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("profile " + path + " is not a varex profile: " + e.what());
  }
}

}  // namespace varex::profile
