#pragma once
// The range predicate of Ocelot's selection (document 000, sec. 2.2.1): a lower and an upper bound, each
// optional and inclusive or exclusive, then negation. Written once for every value type an operator
// filters on (selection: int32 values; Red Fox's SELECT: uint32 keys).
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "operators/common/toolkit.hpp"

namespace varex::operators {

// What the kernels evaluate: the inclusive range [lo, hi] (empty when lo > hi), then XOR neg.
template <typename T>
struct InclusiveRange {
  T lo;
  T hi;
  std::uint32_t neg;
};

template <typename T>
struct RangeQuery {
  static constexpr std::int64_t kMin = std::numeric_limits<T>::min();
  static constexpr std::int64_t kMax = std::numeric_limits<T>::max();

  std::optional<T> lo;
  std::optional<T> hi;
  bool lo_inclusive = true;
  bool hi_inclusive = true;
  bool negate = false;

  // The predicate as the source states it, flag by flag: this is the host reference.
  bool matches(T x) const {
    bool pass = true;
    if (lo) pass = pass && (lo_inclusive ? x >= *lo : x > *lo);
    if (hi) pass = pass && (hi_inclusive ? x <= *hi : x < *hi);
    return pass != negate;
  }

  // The same predicate as one inclusive range and a negation bit (the kernels' form).
  InclusiveRange<T> inclusive() const {
    std::int64_t l = kMin, h = kMax;
    if (lo) l = lo_inclusive ? std::int64_t{*lo} : std::int64_t{*lo} + 1;
    if (hi) h = hi_inclusive ? std::int64_t{*hi} : std::int64_t{*hi} - 1;
    const std::uint32_t neg = negate ? 1u : 0u;
    if (l > h) return {T{1}, T{0}, neg};  // empty
    return {static_cast<T>(l), static_cast<T>(h), neg};
  }

  // The share of values uniform over all of T that the query selects.
  double uniform_share() const {
    const InclusiveRange<T> r = inclusive();
    const double inside = r.lo > r.hi ? 0.0
                                      : (static_cast<double>(r.hi) - static_cast<double>(r.lo) + 1.0) /
                                            (static_cast<double>(kMax) - static_cast<double>(kMin) + 1.0);
    return r.neg ? 1.0 - inside : inside;
  }

  nlohmann::json to_json() const {
    nlohmann::json j{{"lo_inclusive", lo_inclusive}, {"hi_inclusive", hi_inclusive}, {"negate", negate}};
    if (lo) j["lo"] = *lo;
    if (hi) j["hi"] = *hi;
    return j;
  }

  static RangeQuery from_json(const nlohmann::json& j) {
    RangeQuery q;
    if (j.contains("lo")) q.lo = j.at("lo").get<T>();
    if (j.contains("hi")) q.hi = j.at("hi").get<T>();
    q.lo_inclusive = j.value("lo_inclusive", true);
    q.hi_inclusive = j.value("hi_inclusive", true);
    q.negate = j.value("negate", false);
    return q;
  }

  // From --query keys lo, hi, lo_inclusive, hi_inclusive, negate. Throws UsageError naming a bad value.
  static RangeQuery parse(const std::map<std::string, std::string>& items) {
    RangeQuery q;
    for (const auto& [key, value] : items) {
      if (key == "lo" || key == "hi") {
        const std::int64_t v = parse_int(value, "query " + key);
        if (v < kMin || v > kMax) {
          throw UsageError("query " + key + ": " + value + " does not fit in " +
                           (kMin < 0 ? "a 32-bit integer" : "an unsigned 32-bit integer"));
        }
        (key == "lo" ? q.lo : q.hi) = static_cast<T>(v);
      } else if (key == "lo_inclusive") {
        q.lo_inclusive = parse_bool(value, "query lo_inclusive");
      } else if (key == "hi_inclusive") {
        q.hi_inclusive = parse_bool(value, "query hi_inclusive");
      } else if (key == "negate") {
        q.negate = parse_bool(value, "query negate");
      } else {
        throw UsageError("unknown query key '" + key +
                         "' (keys: lo, hi, lo_inclusive, hi_inclusive, negate)");
      }
    }
    return q;
  }

  // x < min(T) + s * 2^32: the fraction s of values uniform over all of T (a 32-bit type).
  static RangeQuery for_selectivity(double selectivity) {
    static_assert(sizeof(T) == 4);
    if (!(selectivity >= 0.0 && selectivity <= 1.0)) {
      throw UsageError("selectivity must lie between 0 and 1, got " + std::to_string(selectivity));
    }
    RangeQuery q;
    const double cut = std::round(selectivity * 4294967296.0);
    if (cut >= 4294967296.0) return q;  // everything
    q.hi = static_cast<T>(kMin + static_cast<std::int64_t>(cut));
    q.hi_inclusive = false;
    return q;
  }
};

}  // namespace varex::operators
