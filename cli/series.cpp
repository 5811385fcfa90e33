#include "cli/series.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::cli {

namespace {

std::optional<std::uint64_t> as_count(const std::string& text) {
  try {
    return parse_count(text, "");
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

std::optional<double> as_real(const std::string& text) {
  const std::string t(trim(text));
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (*end || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string real_text(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

// `lo..hi` doubling: integers stay integers (2^N written out), anything else doubles as a real number.
void append_range(const std::string& flag, const std::string& element, std::vector<std::string>& out) {
  const std::size_t dots = element.find("..");
  const std::string lo_text(trim(element.substr(0, dots))), hi_text(trim(element.substr(dots + 2)));
  const std::string where = "--" + flag + " " + element;
  if (const auto lo = as_count(lo_text), hi = as_count(hi_text); lo && hi) {
    if (*lo == 0) throw UsageError(where + ": a doubling range starts above 0");
    if (*hi < *lo) throw UsageError(where + ": the range decreases");
    for (std::uint64_t v = *lo; v <= *hi; v *= 2) {
      out.push_back(std::to_string(v));
      if (out.size() > kMostSeriesWorkloads || v > *hi / 2) break;
    }
    return;
  }
  const auto lo = as_real(lo_text), hi = as_real(hi_text);
  if (!lo || !hi) throw UsageError(where + ": a range's ends are numbers");
  if (*lo <= 0) throw UsageError(where + ": a doubling range starts above 0");
  if (*hi < *lo) throw UsageError(where + ": the range decreases");
  // 0.01 doubled five times is 0.32 within rounding: the end is reached within a relative 1e-9.
  for (int k = 0; *lo * std::ldexp(1.0, k) <= *hi * (1 + 1e-9) && out.size() <= kMostSeriesWorkloads; ++k)
    out.push_back(real_text(*lo * std::ldexp(1.0, k)));
}

}  // namespace

std::vector<std::string> series_values(const std::string& flag, const std::string& text) {
  if (text.find(',') == std::string::npos && text.find("..") == std::string::npos) return {text};
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string element(trim(text.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (element.empty()) throw UsageError("--" + flag + " " + text + ": an empty element in the list");
    if (element.find("..") != std::string::npos) {
      append_range(flag, element, out);
    } else {
      out.push_back(element);
    }
    if (out.size() > kMostSeriesWorkloads)
      throw UsageError("--" + flag + " " + text + ": more than " + std::to_string(kMostSeriesWorkloads) +
                       " values");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::map<std::string, std::string>> series_combinations(
    const std::map<std::string, std::string>& flags, const std::vector<std::string>& series) {
  std::vector<std::map<std::string, std::string>> out{flags};
  for (const std::string& name : series) {
    const auto given = flags.find(name);
    if (given == flags.end()) continue;
    const std::vector<std::string> values = series_values(name, given->second);
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& partial : out) {
      for (const std::string& v : values) {
        next.push_back(partial);
        next.back()[name] = v;
      }
    }
    if (next.size() > kMostSeriesWorkloads)
      throw UsageError("the workload flags name " + std::to_string(next.size()) + " workloads; at most " +
                       std::to_string(kMostSeriesWorkloads) + " in one command");
    out = std::move(next);
  }
  return out;
}

}  // namespace varex::cli
