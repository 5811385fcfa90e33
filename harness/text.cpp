#include "harness/text.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "harness/errors.hpp"

namespace varex {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::int64_t parse_int(std::string_view text, std::string_view what) {
  const std::string_view t = trim(text);
  std::int64_t value = 0;
  const char* begin = t.data();
  const char* end = t.data() + t.size();
  if (!t.empty() && *begin == '+') ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (t.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(std::string(what) + ": '" + std::string(text) + "' is not an integer" +
                     (ec == std::errc::result_out_of_range ? " in range" : ""));
  }
  return value;
}

double parse_double(std::string_view text, std::string_view what) {
  const std::string t(trim(text));
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE || !std::isfinite(value)) {
    throw UsageError(std::string(what) + ": '" + std::string(text) + "' is not a number");
  }
  return value;
}

bool parse_bool(std::string_view text, std::string_view what) {
  const std::string_view t = trim(text);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  throw UsageError(std::string(what) + ": '" + std::string(text) + "' is not a boolean (true/false)");
}

std::map<std::string, std::string> parse_assignments(const std::vector<std::string>& items,
                                                     std::string_view option) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UsageError(std::string(option) + ": '" + item + "' is not of the form key=value");
    }
    const std::string key(trim(std::string_view(item).substr(0, eq)));
    if (!out.emplace(key, std::string(std::string_view(item).substr(eq + 1))).second) {
      throw UsageError(std::string(option) + ": '" + key + "' is given twice");
    }
  }
  return out;
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buffer;
}

}  // namespace varex
