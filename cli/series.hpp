#pragma once
// Workload series: the sources draw time against the input's size or a predicate's selectivity, so a
// numeric workload flag (shown as N or X in --help) takes a list, `a,b,c`, and doubling ranges, `A..B`
// (A, 2A, 4A, ... while at most B; `2^16..2^26`, `0.01..0.64`), mixed as `2^10..2^14,100000`. The
// workloads of a command are the cross product of its flags' values, in the order given (the first flag
// varies slowest); `run`, `sweep` and `tune` go over them one after the other.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace varex::cli {

// The most workloads one command may name (a cross product grows fast).
constexpr std::size_t kMostSeriesWorkloads = 256;

// The values of `--flag text`: one value as given when it holds no list or range. Throws UsageError (one
// line, naming the flag) for an empty element, a range whose ends are not numbers, that does not start
// above 0, or that decreases.
std::vector<std::string> series_values(const std::string& flag, const std::string& text);

// Every combination of `flags` (flag name -> value as typed) with the names in `series` expanded by
// series_values; at most kMostSeriesWorkloads of them.
std::vector<std::map<std::string, std::string>> series_combinations(
    const std::map<std::string, std::string>& flags, const std::vector<std::string>& series);

}  // namespace varex::cli
