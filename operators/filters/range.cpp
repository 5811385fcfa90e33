// range: low <= a <= high in one pass (routine 4.4), both bounds inclusive.
#include <limits>

#include "base/errors.hpp"
#include "base/text.hpp"
#include "operators/filters/filters.hpp"

namespace varex::operators {

namespace {

struct Bounds {
  std::uint32_t attribute;
  std::int64_t low, high;
};

Bounds bounds_of(const nlohmann::json& q) {
  return {q.at("attr").get<std::uint32_t>(), q.at("low").get<std::int64_t>(),
          q.at("high").get<std::int64_t>()};
}

std::int64_t bound(const std::string& key, const std::string& value) {
  const std::int64_t v = parse_int(value, "query " + key);
  if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
    throw UsageError("query " + key + "=" + value + " does not fit in a 32-bit integer");
  }
  return v;
}

}  // namespace

nlohmann::json RangeOperator::parse_query(const std::map<std::string, std::string>& query,
                                          std::uint32_t attributes) const {
  // Without bounds: the 20th to the 80th percentile of uniform int32 values (the paper's sec. 5.6).
  std::int64_t low = -1288490189, high = 1288490188;
  std::uint32_t attribute = 0;
  for (const auto& [key, value] : query) {
    if (key == "attr") {
      attribute = parse_attribute(value, attributes, key);
    } else if (key == "low") {
      low = bound(key, value);
    } else if (key == "high") {
      high = bound(key, value);
    } else {
      throw UsageError("range: unknown query key '" + key + "' (keys: attr, low, high)");
    }
  }
  return {{"attr", attribute}, {"low", low}, {"high", high}};
}

std::vector<QueryKeyDecl> RangeOperator::query_keys() const {
  return {{"attr", "the attribute, a0, a1, … (default a0)"},
          {"low",
           "the lower bound, inclusive (int32; default -1288490189, the 20th percentile of uniform values)"},
          {"high", "the upper bound, inclusive (int32; default 1288490188, the 80th percentile)"}};
}

std::vector<std::string> RangeOperator::clauses(const nlohmann::json& query,
                                                const AttributeFilterVariant& variant) const {
  const Bounds b = bounds_of(query);
  const std::string a = "A(" + std::to_string(b.attribute) + ")";
  if (b.low > b.high) return {"0u"};
  if (variant.compare == RangeCompare::UnsignedDifference) {
    // x - low, as unsigned, is at most high - low exactly for the x in [low, high]: one comparison.
    const auto span = static_cast<std::uint32_t>(b.high - b.low);
    return {"(((uint)" + a + "-(uint)" + kernel_int(b.low) + ")<=" + std::to_string(span) + "u)"};
  }
  return {"(" + a + ">=" + kernel_int(b.low) + ")&(" + a + "<=" + kernel_int(b.high) + ")"};
}

AttributeFilter::RowReference RangeOperator::reference(const nlohmann::json& query,
                                                       const datasets::AttributeTable& table) const {
  return [b = bounds_of(query), &table](std::uint64_t r, bool&) {
    const std::int64_t x = table.columns[b.attribute][r];
    return b.low <= x && x <= b.high;
  };
}

BlockFilter RangeOperator::baseline(const nlohmann::json& query,
                                    const datasets::AttributeTable& table) const {
  return [b = bounds_of(query), &table](std::uint64_t begin, std::uint64_t end, std::uint8_t* keep) {
    const std::int32_t* x = table.columns[b.attribute].data() + begin;
    const auto lo = static_cast<std::int32_t>(b.low), hi = static_cast<std::int32_t>(b.high);
    for (std::uint64_t i = 0; i < end - begin; ++i)
      keep[i] = static_cast<std::uint8_t>((x[i] >= lo) & (x[i] <= hi));
  };
}

std::vector<variants::Tunable> RangeOperator::own_tunables() const {
  using variants::Value;
  return {{"compare",
           variants::TunableKind::Compile,
           {Value{"two_sided"}, Value{"unsigned_difference"}},
           Value{"two_sided"},
           "two_sided: low <= a and a <= high; unsigned_difference: (unsigned)(a - low) <= high - low, one "
           "comparison"},
          {"output",
           variants::TunableKind::Launch,
           {Value{"bitmap"}, Value{"count"}},
           Value{"bitmap"},
           "bitmap: one bit per row; count: only the rows kept and the sum of their indices"}};
}

}  // namespace varex::operators
