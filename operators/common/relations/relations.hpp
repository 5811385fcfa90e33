#pragma once
// Red Fox relations (document 002, sec. 3.2): tuples of an unsigned 32-bit key and one to three unsigned
// 32-bit values, generated (seeded, counter-based) or read from a user file with one tuple per line,
// "key,value[,value...]". Held by column here; operators lay them out on the device as they choose
// (array of tuples as in the source, or one array per attribute).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace varex::datasets {

struct Relation {
  // columns[0] holds the keys, columns[1..] the values v0, v1, v2; all of one length.
  std::vector<std::vector<std::uint32_t>> columns;

  std::uint64_t rows() const { return columns.empty() ? 0 : columns[0].size(); }
  std::uint32_t attributes() const { return static_cast<std::uint32_t>(columns.size()); }
  std::uint32_t values() const { return attributes() ? attributes() - 1 : 0; }
};

// How generated keys are distributed:
//   uniform: independent and uniform over all 2^32 keys;
//   sorted:  the uniform keys in ascending order (the sorted inputs Red Fox's joins expect);
//   dup:     256 distinct keys, k * 2^24 + 2^23 for k = 0..255, drawn uniformly (many duplicates);
//   runs:    ascending keys, each distinct key repeated `run` times consecutively (the last run may be
//            shorter): run j (rows j * run ..) has the key j * step + a seeded draw below step, step =
//            floor(2^32 / runs), so keys strictly increase from run to run and spread over all 2^32 keys
//            (the consecutive duplicates that Red Fox's UNIQUE and REDUCE BY KEY work on).
// Values are always uniform over all 2^32 values.
enum class KeyDistribution { Uniform, Sorted, Dup, Runs };
KeyDistribution key_distribution_from_string(std::string_view name);  // UsageError naming the choices
std::string to_string(KeyDistribution keys);

// `values` (1..3) value columns; the same (rows, values, keys, seed) always gives the same relation, and
// the key column does not depend on `values`. `run` (>= 1; UsageError otherwise) is the run length of
// KeyDistribution::Runs; the other distributions ignore it.
constexpr std::uint64_t kDefaultRun = 16;
Relation generate_relation(std::uint64_t rows, std::uint32_t values, KeyDistribution keys, std::uint64_t seed,
                           std::uint64_t run = kDefaultRun);

// One tuple per line: "key,value[,value[,value]]", unsigned 32-bit decimals, spaces around fields allowed,
// a final newline optional. Every line must have the first line's number of fields (2 to 4). UsageError
// naming the file and the line for anything else (a field that is no unsigned 32-bit decimal, an empty
// line inside the file, a line of another width). An empty file gives a relation of no rows and no
// columns: the operators refuse it.
Relation parse_relation(std::string_view bytes, const std::string& path);
Relation load_relation(const std::string& path);

}  // namespace varex::datasets
