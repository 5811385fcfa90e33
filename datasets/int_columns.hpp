#pragma once
// Integer columns: deterministic generators and loaders for user files.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/workload.hpp"

namespace varex::datasets {

// Counter-based generator (splitmix64 of seed and row), so any row can be produced independently and the
// work is spread over all host cores. Values cover the whole int32 range uniformly.
std::vector<std::int32_t> uniform_int32(std::uint64_t rows, std::uint64_t seed);

// One integer per line (text), or little-endian int32 when the name ends in ".bin". Malformed content is a
// UsageError that names the file and line.
std::vector<std::int32_t> load_int32_column(const std::string& path);

// Lines of the form "key,value" (two integers), for the group-by.
std::vector<std::pair<std::int32_t, std::int32_t>> load_key_value_rows(const std::string& path);
// The same from a file's bytes (`path` names it in errors; `binary`: little-endian int32, else text).
std::vector<std::int32_t> parse_int32_column(const std::string& bytes, const std::string& path, bool binary);
std::vector<std::pair<std::int32_t, std::int32_t>> parse_key_value_rows(const std::string& bytes,
                                                                        const std::string& path);

// Calls `row(line number, trimmed text)` for every line of a user file; an empty line is a UsageError naming
// the file and line, unless it ends the file.
void for_each_line(const std::string& bytes, const std::string& path,
                   const std::function<void(std::size_t, std::string_view)>& row);
// A signed 32-bit decimal (an optional sign); UsageError naming the file and line otherwise.
std::int32_t parse_int32(std::string_view text, const std::string& path, std::size_t line_no);

// Runs body(begin, end) over [0, rows) split across the host's cores.
void parallel_rows(std::uint64_t rows, const std::function<void(std::uint64_t, std::uint64_t)>& body);

// A stable hash of a file's bytes, to tell user workloads apart in the store.
std::string file_fingerprint(const std::string& path);

// A workload of `op` over one int32 column read from `path` (made absolute): generator "file", its
// parameters (path, rows, format, fingerprint), no query.
WorkloadSpec int32_file_workload(const std::string& op, const std::string& path);
// The column of a workload generated "uniform_int32" (parameters rows and seed) or read from a "file";
// UsageError for another generator, or for a file whose rows changed since the workload was made.
std::vector<std::int32_t> int32_column_of(const WorkloadSpec& spec);

std::uint64_t splitmix64(std::uint64_t x);

}  // namespace varex::datasets
