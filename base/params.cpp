#include "base/params.hpp"

#include "base/errors.hpp"

namespace varex::variants {

std::string to_string(const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

nlohmann::json to_json(const Value& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return *i;
  return std::get<std::string>(value);
}

Value value_from_json(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<std::int64_t>();
  if (j.is_string()) return j.get<std::string>();
  throw UsageError("tunable value " + j.dump() + " is neither an integer nor a word");
}

nlohmann::json to_json(const Params& params) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : params) j[name] = to_json(value);
  return j;
}

Params params_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw UsageError("parameters must be a JSON object, got " + j.dump());
  Params params;
  for (const auto& [name, value] : j.items()) params[name] = value_from_json(value);
  return params;
}

std::string canonical(const Params& params) {
  return to_json(params).dump();
}

std::string describe(const Params& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out += ' ';
    out += name + "=" + to_string(value);
  }
  return out;
}

std::int64_t get_int(const Params& params, std::string_view name) {
  const auto it = params.find(name);
  if (it == params.end() || !std::holds_alternative<std::int64_t>(it->second)) {
    throw UsageError("parameter '" + std::string(name) + "' is missing or not an integer");
  }
  return std::get<std::int64_t>(it->second);
}

const std::string& get_string(const Params& params, std::string_view name) {
  const auto it = params.find(name);
  if (it == params.end() || !std::holds_alternative<std::string>(it->second)) {
    throw UsageError("parameter '" + std::string(name) + "' is missing or not a word");
  }
  return std::get<std::string>(it->second);
}

std::int64_t get_int_or(const Params& params, std::string_view name, std::int64_t fallback) {
  const auto it = params.find(name);
  if (it == params.end()) throw UsageError("parameter '" + std::string(name) + "' is missing");
  if (const auto* i = std::get_if<std::int64_t>(&it->second)) return *i;
  return fallback;
}

}  // namespace varex::variants
