#pragma once
// The CPU baseline of Govindaraju's operators, as the paper had one: an optimised implementation on all
// host cores. Predicates are evaluated a block of rows at a time, one predicate over a whole block per loop
// (loops the compiler vectorises, no branch per row); the k-th largest is a parallel radix select. Timed
// with the host clock on the same records the device variants run on, and checked against the host
// reference (with which it shares no code).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/measurement.hpp"
#include "operators/common/attributes/attribute_table.hpp"
#include "operators/common/attributes/cnf.hpp"

namespace varex::operators {

// Sets keep[i] to 0 or 1 for rows begin + i, i < end - begin (at most kBaselineBlock rows).
using BlockFilter = std::function<void(std::uint64_t begin, std::uint64_t end, std::uint8_t* keep)>;
constexpr std::uint64_t kBaselineBlock = 4096;

BlockFilter cnf_block_filter(const Cnf& cnf, const datasets::AttributeTable& table);

// The bitmap (bit r%8 of byte r/8) of the rows `filter` keeps, on all host cores.
std::vector<std::uint8_t> cpu_filter_bitmap(std::uint64_t rows, const BlockFilter& filter);

struct CpuAggregate {
  std::uint64_t rows = 0;
  std::int64_t sum = 0;
  std::int32_t min = 0, max = 0;  // of the rows kept (0 when none)
};
CpuAggregate cpu_aggregate(const std::vector<std::int32_t>& column, const BlockFilter& filter);

// The k-th largest of the kept values (1 <= k <= rows kept; nullopt otherwise) and the rows kept: a radix
// select over 8-bit digits, each pass's histogram counted on all host cores.
std::pair<std::optional<std::int32_t>, std::uint64_t> cpu_kth_largest(const std::vector<std::int32_t>& column,
                                                                      std::uint64_t k,
                                                                      const BlockFilter& filter);

// Times `run` (which returns whether its result equals the reference) `repetitions` times with the host
// clock: the median, and whether every repetition verified.
BaselineTiming time_cpu_baseline(const std::string& engine, const std::function<bool()>& run,
                                 int repetitions = 3);

// Threads the baselines use (all host cores).
unsigned baseline_threads();

}  // namespace varex::operators
