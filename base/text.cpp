#include "base/text.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/errors.hpp"

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

bool is_utf8(std::string_view bytes) {
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    std::size_t extra = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= bytes.size()) return false;  // cut short
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto d = static_cast<unsigned char>(bytes[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    static const std::uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

std::string latin1_to_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += ch;
    } else {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

nlohmann::json bytes_json(const std::string& bytes) {
  if (is_utf8(bytes)) return bytes;
  return {{"latin1", latin1_to_utf8(bytes)}};
}

std::string bytes_from_json(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  const std::string text = j.at("latin1").get<std::string>();
  std::string bytes;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      bytes += text[i];
    } else if ((c & 0xFE) == 0xC2 && i + 1 < text.size()) {  // U+0080 .. U+00FF
      bytes += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(text[++i]) & 0x3F));
    } else {
      throw UsageError("a Latin-1 byte string holds a character past U+00FF");
    }
  }
  return bytes;
}

std::uint64_t parse_count(std::string_view text, std::string_view what) {
  const std::string t(trim(text));
  std::int64_t value;
  if (t.rfind("2^", 0) == 0) {
    const std::int64_t exponent = parse_int(t.substr(2), what);
    if (exponent < 0 || exponent > 40)
      throw UsageError(std::string(what) + ": exponent " + std::to_string(exponent) + " is out of range");
    value = std::int64_t{1} << exponent;
  } else {
    value = parse_int(t, what);
  }
  if (value < 0) throw UsageError(std::string(what) + ": " + t + " is negative");
  return static_cast<std::uint64_t>(value);
}

std::string printable(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (text.compare(i, 3, "\xef\xbb\xbf") == 0) {
      out += "\\ufeff";  // the byte-order mark, invisible as itself
      i += 2;
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace varex
