#pragma once
// Strict parsing of user-supplied text: every function names the offending input in its UsageError.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace varex {

std::vector<std::string> split(std::string_view text, char separator);
std::string_view trim(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// `text` with control characters (carriage returns, newlines of a user's file, escape sequences) and the
// byte-order mark written as escapes, so that an echoed user byte can neither break a message's line nor
// hide in it.
std::string printable(const std::string& text);

// Whole-string integer parse; `what` names the value in the error message.
std::int64_t parse_int(std::string_view text, std::string_view what);
double parse_double(std::string_view text, std::string_view what);
// A non-negative integer or 2^N (N <= 40).
std::uint64_t parse_count(std::string_view text, std::string_view what);
// true/false, 1/0, yes/no, on/off.
bool parse_bool(std::string_view text, std::string_view what);

// "k=v" items (from repeated --query/--set options) into a map; duplicate keys are an error.
std::map<std::string, std::string> parse_assignments(const std::vector<std::string>& items,
                                                     std::string_view option);

// Human-readable byte counts ("1.0 GiB").
std::string format_bytes(std::uint64_t bytes);

// Byte strings (patterns, planted strings) in JSON, whose strings must be UTF-8: a string of bytes that is
// valid UTF-8 stays a JSON string; any other is stored as {"latin1": S}, S being its bytes read as Latin-1
// (one code point per byte), which bytes_from_json turns back into the same bytes.
bool is_utf8(std::string_view bytes);
// Each byte as the code point of the same number, in UTF-8 (bytes >= 0x80 take two).
std::string latin1_to_utf8(std::string_view bytes);
nlohmann::json bytes_json(const std::string& bytes);
std::string bytes_from_json(const nlohmann::json& j);

}  // namespace varex
