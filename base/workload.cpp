#include "base/workload.hpp"

#include <algorithm>
#include <iterator>

#include "base/hash.hpp"

namespace varex::datasets {

nlohmann::json WorkloadSpec::to_json() const {
  return {{"op", op}, {"generator", generator}, {"params", params}, {"query", query}};
}

WorkloadSpec WorkloadSpec::from_json(const nlohmann::json& j) {
  WorkloadSpec s;
  s.op = j.at("op").get<std::string>();
  s.generator = j.at("generator").get<std::string>();
  s.params = j.value("params", nlohmann::json::object());
  s.query = j.value("query", nlohmann::json::object());
  return s;
}

// nlohmann::json objects are ordered by key, so dump() is canonical.
std::string WorkloadSpec::id() const {
  return hex64(fnv1a(to_json().dump()));
}

std::string WorkloadSpec::describe() const {
  std::string out = op + " on " + generator + " " + params.dump();
  if (!query.empty()) out += " query " + query.dump();
  return out;
}

std::string to_string(ScaleKind kind) {
  return kind == ScaleKind::Count ? "count" : "fraction";
}

// The kinds are how the class is compared, not what it is: ids stay what they were before classes had them.
std::string WorkloadClass::id() const {
  return hex64(fnv1a(nlohmann::json{{"shape", shape}, {"scale", scale}}.dump()));
}

WorkloadClass WorkloadClass::from_json(const nlohmann::json& j) {
  WorkloadClass c;
  c.shape = j.value("shape", nlohmann::json::object());
  c.scale = j.value("scale", nlohmann::json::object());
  c.kinds = j.value("kinds", nlohmann::json::object());
  return c;
}

std::string WorkloadClass::describe() const {
  std::string out;
  auto add = [&](const std::string& key, const nlohmann::json& value) {
    if (!out.empty()) out += ' ';
    out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  };
  for (const auto& [key, value] : scale.items()) add(key, value);
  for (const auto& [key, value] : shape.items()) add(key, value);
  return out;
}

std::optional<WorkloadSpec> divide_counts(const WorkloadSpec& spec, const std::vector<std::string>& keys,
                                          std::uint64_t divisor) {
  if (divisor < 2 || spec.params.contains("path")) return std::nullopt;
  WorkloadSpec out = spec;
  bool divided = false;
  for (const std::string& key : keys) {
    const auto it = out.params.find(key);
    if (it == out.params.end() || !it->is_number_unsigned()) continue;
    const std::uint64_t rows = std::max<std::uint64_t>(1, it->get<std::uint64_t>() / divisor);
    *it = rows;
    divided = true;
  }
  if (!divided) return std::nullopt;
  // Distinct keys are the first relation's ("rows"), as every generator counts them.
  if (const auto d = out.params.find("distinct"); d != out.params.end() && d->is_number_unsigned())
    *d = std::min(d->get<std::uint64_t>(), out.rows());
  return out;
}

WorkloadClass default_class(const WorkloadSpec& spec, const std::vector<ScaleKey>& scale_keys) {
  std::vector<ScaleKey> keys{{"rows", ScaleKind::Count}};
  keys.insert(keys.end(), scale_keys.begin(), scale_keys.end());
  static const char* const kNotAnAnswer[] = {"seed",         "path",   "path2",   "fingerprint",
                                             "fingerprint2", "format", "version", "plant"};
  WorkloadClass c;
  const bool file = spec.generator == "file" || spec.generator == "files";
  c.shape["generator"] = file ? "file" : spec.generator;
  for (const auto& [key, value] : spec.params.items()) {
    const std::string& name = key;  // clang 14 (the fuzz build) does not capture a structured binding
    const auto scale =
        std::find_if(keys.begin(), keys.end(), [&](const ScaleKey& k) { return k.name == name; });
    if (scale != keys.end()) {
      if (value.is_number()) c.set_scale(key, value, scale->kind);
    } else if (std::find(std::begin(kNotAnAnswer), std::end(kNotAnAnswer), key) == std::end(kNotAnAnswer)) {
      c.shape[key] = value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
  for (const auto& [key, value] : spec.query.items())
    c.shape[key] = value.is_string() ? value.get<std::string>() : value.dump();
  return c;
}

}  // namespace varex::datasets
