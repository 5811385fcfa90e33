#include "operators/common/attributes/attribute_table.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/errors.hpp"
#include "datasets/input_file.hpp"
#include "datasets/int_columns.hpp"

namespace varex::datasets {

namespace {

// A uniform draw in (0, 1) for (key, row), from 53 random bits.
double unit(std::uint64_t key, std::uint64_t row) {
  return (static_cast<double>(splitmix64(key ^ (row * 0xd1342543de82ef95ULL)) >> 11) + 0.5) * 0x1.0p-53;
}

// A standard normal draw (Box-Muller over two independent uniforms).
double normal(std::uint64_t key, std::uint64_t row) {
  const double u = unit(key, row), v = unit(key ^ 0x9e3779b97f4a7c15ULL, row);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
}

std::int32_t clamp_to(double x, double lo, double hi) {
  return static_cast<std::int32_t>(std::clamp(std::floor(x), lo, hi));
}

std::int32_t uniform_value(std::uint64_t key, std::uint64_t row) {
  return static_cast<std::int32_t>(
      static_cast<std::uint32_t>(splitmix64(key ^ (row * 0xd1342543de82ef95ULL))));
}

// Attribute `a` of row `row` in a skewed shape; `bytes` is a0 of the same row (traces' a3 depends on it).
std::int32_t skewed_value(AttributeData data, std::uint32_t a, std::uint64_t key, std::uint64_t row,
                          std::int32_t bytes) {
  const double u = unit(key, row);
  if (data == AttributeData::Traces) {
    switch (a) {
      case 0:
        return clamp_to(40.0 * std::pow(u, -1.0 / 1.1), 40, (1 << 19) - 1);
      case 1:
        return clamp_to(std::exp(5.0 + 2.0 * normal(key, row)), 0, 1 << 24);
      case 2:
        return clamp_to(65536.0 * u * u * u * u, 0, 65535);
      default:
        return 1 + static_cast<std::int32_t>(bytes / (536.0 + 1000.0 * u));
    }
  }
  switch (a) {
    case 0:
      return clamp_to(17.0 + 73.0 * std::pow(u, 1.6), 17, 90);
    case 1:
      return clamp_to(std::exp(10.4 + 0.9 * normal(key, row)), 0, 1e7);
    case 2:
      return clamp_to(40.0 + 12.0 * normal(key, row) + 0.5, 1, 99);
    default:
      return clamp_to(16.0 * u * u, 0, 15);
  }
}

}  // namespace

AttributeData attribute_data_from_string(std::string_view name) {
  if (name == "uniform") return AttributeData::Uniform;
  if (name == "traces") return AttributeData::Traces;
  if (name == "census") return AttributeData::Census;
  throw UsageError("--data " + std::string(name) + ": choose uniform, traces or census");
}

std::string to_string(AttributeData data) {
  switch (data) {
    case AttributeData::Uniform:
      return "uniform";
    case AttributeData::Traces:
      return "traces";
    case AttributeData::Census:
      return "census";
  }
  return "?";
}

AttributeTable generate_attribute_table(std::uint64_t rows, std::uint32_t attributes, AttributeData data,
                                        std::uint64_t seed) {
  AttributeTable t;
  t.columns.assign(attributes, std::vector<std::int32_t>(rows));
  std::vector<std::uint64_t> keys(attributes);
  for (std::uint32_t a = 0; a < attributes; ++a) keys[a] = splitmix64(seed ^ splitmix64(a + 1));
  parallel_rows(rows, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint32_t a = 0; a < attributes; ++a) {
      auto& column = t.columns[a];
      for (std::uint64_t r = begin; r < end; ++r) {
        column[r] = data == AttributeData::Uniform || a > 3
                        ? uniform_value(keys[a], r)
                        : skewed_value(data, a, keys[a], r, a == 3 ? t.columns[0][r] : 0);
      }
    }
  });
  return t;
}

AttributeTable parse_attribute_table(const std::string& bytes, const std::string& path) {
  AttributeTable t;
  for_each_line(bytes, path, [&](std::size_t line_no, std::string_view line) {
    const auto fields = static_cast<std::size_t>(1 + std::count(line.begin(), line.end(), ','));
    if (t.columns.empty()) {
      if (fields > kMaxAttributes) {
        throw UsageError(path + ":" + std::to_string(line_no) + ": " + std::to_string(fields) +
                         " attributes; a record has at most " + std::to_string(kMaxAttributes));
      }
      t.columns.assign(fields, {});
    } else if (fields != t.columns.size()) {
      throw UsageError(path + ":" + std::to_string(line_no) + ": " + std::to_string(fields) +
                       " attributes where line 1 has " + std::to_string(t.columns.size()));
    }
    std::string_view rest = line;
    for (auto& column : t.columns) {
      const std::size_t comma = rest.find(',');
      std::string_view field = rest.substr(0, comma);
      while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
      while (!field.empty() && (field.back() == ' ' || field.back() == '\t')) field.remove_suffix(1);
      column.push_back(parse_int32(field, path, line_no));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  });
  return t;
}

AttributeTable load_attribute_table(const std::string& path) {
  return parse_attribute_table(read_input_file(path), path);
}

}  // namespace varex::datasets
