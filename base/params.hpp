#pragma once
// A variant's parameters: one value (an integer or a word) per tunable, keyed by name. The base layer's
// vocabulary: the store keeps them, spaces (variants/) enumerate them, operators read them.
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

namespace varex::variants {

using Value = std::variant<std::int64_t, std::string>;
std::string to_string(const Value& value);
nlohmann::json to_json(const Value& value);
Value value_from_json(const nlohmann::json& j);

// One value per tunable, keyed by name; std::map keeps a canonical order for hashing and printing.
using Params = std::map<std::string, Value, std::less<>>;
nlohmann::json to_json(const Params& params);
Params params_from_json(const nlohmann::json& j);
std::string canonical(const Params& params);  // compact JSON with sorted keys
std::string describe(const Params& params);   // "kernel=overflow ept=8 ..."
std::int64_t get_int(const Params& params, std::string_view name);
const std::string& get_string(const Params& params, std::string_view name);
// Integer value or `fallback` when the value is a word (e.g. local=auto).
std::int64_t get_int_or(const Params& params, std::string_view name, std::int64_t fallback);

}  // namespace varex::variants
