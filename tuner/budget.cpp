#include "tuner/budget.hpp"

#include <cctype>
#include <cstdio>

#include "base/errors.hpp"
#include "base/text.hpp"

namespace varex::tuner {

Budget Budget::parse(std::string_view raw) {
  const std::string text(trim(raw));
  Budget b;
  // An empty value is a mistake (an unset shell variable), never "no limit": that must be said as "all".
  if (text.empty())
    throw UsageError(
        "--budget: empty; give evaluations (200), a duration (90s, 2m, 1h), a share (10%) or all");
  if (text == "all" || text == "100%") return b;
  if (text.back() == '%') {
    b.kind = Kind::Fraction;
    b.value = parse_double(text.substr(0, text.size() - 1), "--budget") / 100.0;
    if (!(b.value > 0 && b.value <= 1))
      throw UsageError("--budget: '" + text + "' is not a share between 0% and 100%");
  } else if (text.back() == 's' || text.back() == 'm' || text.back() == 'h') {
    // Wall time with its unit: 90s, 2m, 1.5h (stored in seconds, so 2m and 120s are the same budget).
    b.kind = Kind::Seconds;
    const double unit = text.back() == 'h' ? 3600 : text.back() == 'm' ? 60 : 1;
    if (text.size() < 2 || std::isspace(static_cast<unsigned char>(text[text.size() - 2])))
      throw UsageError("--budget: '" + text + "' is not a duration such as 90s, 2m or 1.5h");
    b.value = parse_double(text.substr(0, text.size() - 1), "--budget") * unit;
    if (!(b.value > 0)) throw UsageError("--budget: '" + text + "' is not a positive duration");
  } else {
    b.kind = Kind::Evaluations;
    const std::int64_t n = parse_int(text, "--budget");
    if (n <= 0) throw UsageError("--budget: '" + text + "' is not a positive number of evaluations");
    b.value = static_cast<double>(n);
  }
  return b;
}

std::string Budget::to_string() const {
  char buffer[64];
  switch (kind) {
    case Kind::Unlimited:
      return "all";
    case Kind::Evaluations:
      std::snprintf(buffer, sizeof buffer, "%.0f", value);
      break;
    case Kind::Seconds:
      std::snprintf(buffer, sizeof buffer, "%gs", value);
      break;
    case Kind::Fraction:
      std::snprintf(buffer, sizeof buffer, "%g%%", value * 100);
      break;
  }
  return buffer;
}

double Budget::seconds(double exhaustive_cost_s) const {
  if (kind == Kind::Seconds) return value;
  if (kind == Kind::Fraction) return value * exhaustive_cost_s;
  return std::numeric_limits<double>::infinity();
}

}  // namespace varex::tuner
