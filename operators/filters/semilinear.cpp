// semilinear: dot(s, a) op b over the first attributes, float coefficients (routine 4.2).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/errors.hpp"
#include "operators/filters/filters.hpp"

namespace varex::operators {

namespace {

struct Linear {
  std::vector<float> coef;
  CompareOp op;
  float b;
};

Linear linear_of(const nlohmann::json& q) {
  Linear l;
  for (const auto& c : q.at("coef")) l.coef.push_back(c.get<float>());
  l.op = compare_op_from_string(q.at("op").get<std::string>());
  l.b = q.at("b").get<float>();
  return l;
}

float parse_float(const std::string& text, const std::string& key) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v) || std::fabs(v) > 3.4e38) {
    throw UsageError("query " + key + ": '" + text + "' is no finite float");
  }
  return static_cast<float>(v);
}

// A float as an exact C literal (hexadecimal, as both OpenCL C and CUDA C++ read it).
std::string float_literal(float v) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%af", static_cast<double>(v));
  return std::string("(") + buffer + ")";
}

}  // namespace

nlohmann::json SemilinearOperator::parse_query(const std::map<std::string, std::string>& query,
                                               std::uint32_t attributes) const {
  // Without a query: four fixed coefficients and b = 0 (about half of uniform rows).
  std::vector<float> coef{0.25f, -0.5f, 0.75f, -1.0f};
  std::string op = "<=";
  float b = 0;
  for (const auto& [key, value] : query) {
    if (key == "coef") {
      coef.clear();
      std::stringstream items(value);
      for (std::string item; std::getline(items, item, ',');) coef.push_back(parse_float(item, "coef"));
      if (coef.empty() || coef.size() > 4) {
        throw UsageError("query coef=" + value + ": give 1 to 4 coefficients, one per attribute a0, a1, …");
      }
    } else if (key == "op") {
      compare_op_from_string(value);
      op = value == "==" ? "=" : value;
    } else if (key == "b") {
      b = parse_float(value, "b");
    } else {
      throw UsageError("semilinear: unknown query key '" + key + "' (keys: coef, op, b)");
    }
  }
  if (!query.count("coef") && attributes) coef.resize(std::min<std::size_t>(coef.size(), attributes));
  if (attributes && coef.size() > attributes) {
    throw UsageError("query coef: " + std::to_string(coef.size()) + " coefficients, but the records have " +
                     std::to_string(attributes) + " attributes");
  }
  nlohmann::json c = nlohmann::json::array();
  for (float v : coef) c.push_back(v);
  return {{"coef", c}, {"op", op}, {"b", b}};
}

std::vector<QueryKeyDecl> SemilinearOperator::query_keys() const {
  return {{"coef", "the coefficients s0,s1,… of a0, a1, … (1 to 4 floats; default 0.25,-0.5,0.75,-1)"},
          {"op", "the comparison of dot(s, a) with b: = != < <= > >= (default <=)"},
          {"b", "the float compared with (default 0)"}};
}

std::vector<std::string> SemilinearOperator::clauses(const nlohmann::json& query,
                                                     const AttributeFilterVariant&) const {
  const Linear l = linear_of(query);
  std::string dot;
  for (std::size_t i = 0; i < l.coef.size(); ++i) {
    dot += (i ? "+" : "") + float_literal(l.coef[i]) + "*(float)A(" + std::to_string(i) + ")";
  }
  const std::string op = l.op == CompareOp::Eq ? "==" : to_string(l.op);
  return {"((" + dot + ")" + op + float_literal(l.b) + ")"};
}

AttributeFilter::RowReference SemilinearOperator::reference(const nlohmann::json& query,
                                                            const datasets::AttributeTable& table) const {
  return [l = linear_of(query), &table](std::uint64_t r, bool& tolerated) {
    // In long double: each product of a float and an int32 is exact (24 + 31 bits < 64).
    long double dot = 0, terms = 0;
    for (std::size_t i = 0; i < l.coef.size(); ++i) {
      const long double term = static_cast<long double>(l.coef[i]) * table.columns[i][r];
      dot += term;
      terms += std::fabs(term);
    }
    const long double scale = std::max(std::fabs(static_cast<long double>(l.b)), terms);
    tolerated = std::fabs(dot - l.b) <= kSemilinearTolerance * scale;
    return compares<long double>(dot, l.op, l.b);
  };
}

BlockFilter SemilinearOperator::baseline(const nlohmann::json& query,
                                         const datasets::AttributeTable& table) const {
  return [l = linear_of(query), &table](std::uint64_t begin, std::uint64_t end, std::uint8_t* keep) {
    const std::uint64_t n = end - begin;
    std::array<float, kBaselineBlock> dot{};
    for (std::uint64_t i = 0; i < n; ++i) dot[i] = 0;
    for (std::size_t a = 0; a < l.coef.size(); ++a) {
      const std::int32_t* x = table.columns[a].data() + begin;
      const float s = l.coef[a];
      for (std::uint64_t i = 0; i < n; ++i) dot[i] += s * static_cast<float>(x[i]);
    }
    for (std::uint64_t i = 0; i < n; ++i) keep[i] = compares<long double>(dot[i], l.op, l.b) ? 1 : 0;
  };
}

std::uint32_t SemilinearOperator::attributes_read(const nlohmann::json& query) const {
  return static_cast<std::uint32_t>(query.at("coef").size());
}

}  // namespace varex::operators
