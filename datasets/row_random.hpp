#pragma once
// A generated row's own random stream, seeded from (seed, row) alone: any row can be drawn without the rows
// before it, so threads fill ranges independently and a data set is the same whatever the thread count.
#include <cstdint>

#include "datasets/int_columns.hpp"

namespace varex::datasets {

class RowRandom {
 public:
  // `stride` spreads the rows' seeds; each generator keeps the one it was recorded with (its data stay the
  // same): the key columns 0xd1342543de82ef95, the string columns 0x9e3779b97f4a7c15.
  RowRandom(std::uint64_t seed, std::uint64_t row, std::uint64_t stride)
      : state_(splitmix64(seed ^ (row * stride))) {}
  std::uint64_t next() { return state_ = splitmix64(state_); }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

}  // namespace varex::datasets
