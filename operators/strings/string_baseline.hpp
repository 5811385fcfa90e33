#pragma once
// The CPU baseline a user would pick instead of a GPU: Hyperscan (Debian's libhyperscan) on all host cores
// for regular expressions and LIKE (translated to an anchored regular expression), RE2 where Hyperscan
// refuses a pattern, and plain byte comparison for equality and prefix. Timed with the host clock (it is
// host code), on the same column the device variants run on.
#include <cstdint>
#include <string>
#include <vector>

#include "operators/strings/string_columns.hpp"
#include "operators/strings/string_reference.hpp"

namespace varex::operators {

struct CpuBaseline {
  std::string engine;  // "hyperscan", "re2" or "memcmp"
  unsigned threads = 0;
  double ms = 0;  // median of the timed repetitions
  std::vector<std::uint8_t> bitmap;
};

CpuBaseline run_cpu_baseline(StringOp op, const std::string& operand, const datasets::StringColumn& column,
                             int repetitions = 3);

}  // namespace varex::operators
