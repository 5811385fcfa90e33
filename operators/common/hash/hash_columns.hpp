#pragma once
// The hash join's and the group-by's input columns, drawn from the shared key distributions
// (datasets/keys.hpp).
#include <cstdint>
#include <vector>

namespace varex::datasets {

// Build side: `rows` keys over `distinct` key values (each occurs at least once; the rest repeat them,
// uniformly or with Zipf exponent `zipf`). Probe side: `rows2` keys, a fraction `match_ratio` of them
// drawn from the build keys (uniformly or Zipf), the rest absent from the build side.
struct JoinColumns {
  std::vector<std::int32_t> build;
  std::vector<std::int32_t> probe;
};
JoinColumns join_columns(std::uint64_t rows, std::uint64_t rows2, std::uint64_t distinct, double match_ratio,
                         double zipf, std::uint64_t seed);

// Group-by input: `rows` keys over exactly `distinct` groups (uniform or Zipf), values uniform over int32.
struct GroupColumns {
  std::vector<std::int32_t> keys;
  std::vector<std::int32_t> values;
};
GroupColumns group_columns(std::uint64_t rows, std::uint64_t distinct, double zipf, std::uint64_t seed);

}  // namespace varex::datasets
