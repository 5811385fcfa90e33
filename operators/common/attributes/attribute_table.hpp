#pragma once
// Govindaraju's relations (document 004, sec. 5): records of signed 32-bit attributes a0, a1, …, held by
// column. Generated (seeded, counter-based, on all host cores) in one of three shapes, or read from a user
// file with one record per line, "a0,a1,…".
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace varex::datasets {

constexpr std::uint32_t kMaxAttributes = 16;

struct AttributeTable {
  std::vector<std::vector<std::int32_t>> columns;  // columns[c] is attribute a<c>; all of one length

  std::uint64_t rows() const { return columns.empty() ? 0 : columns[0].size(); }
  std::uint32_t attributes() const { return static_cast<std::uint32_t>(columns.size()); }
};

// What generated attributes look like (every value a deterministic function of seed, attribute and row):
//   uniform: every attribute uniform over all of int32;
//   traces:  the shape of the paper's TCP/IP trace records (1 M records): a0 the bytes of a connection,
//            Pareto (alpha 1.1, from 40 bytes) cut at 2^19 - 1 ("19 bits" as the paper's data count);
//            a1 its duration in ms, log-normal (mu 5, sigma 2) cut at 2^24; a2 its port, 65536 u^4
//            (low ports far more common); a3 its packets, 1 + a0 / (536 + 1000 u) (tied to a0);
//   census:  the shape of the paper's census rows (360 K records): a0 age, 17 + 73 u^1.6; a1 income,
//            log-normal (mu 10.4, sigma 0.9) cut at 10^7; a2 hours per week, normal (40, 12) clamped to
//            1..99; a3 an education code, 16 u^2 (skewed to low codes).
// Attributes past a3 are uniform in every shape.
enum class AttributeData { Uniform, Traces, Census };
AttributeData attribute_data_from_string(std::string_view name);  // UsageError naming the choices
std::string to_string(AttributeData data);

AttributeTable generate_attribute_table(std::uint64_t rows, std::uint32_t attributes, AttributeData data,
                                        std::uint64_t seed);

// One record per line: "a0,a1,…", signed 32-bit decimals, spaces around fields allowed, a final newline
// optional; every line has the first line's number of fields (1 to kMaxAttributes). UsageError naming the
// file and line otherwise. An empty file is a table of no rows and no attributes.
AttributeTable parse_attribute_table(const std::string& bytes, const std::string& path);
AttributeTable load_attribute_table(const std::string& path);

}  // namespace varex::datasets
