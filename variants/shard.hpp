#pragma once
// A shard of a space: one of N disjoint parts that together cover its valid variants, so that N processes
// (the tasks of a fleet run, docs/FLEET.md) sweep one space between them, each variant exactly once. A shard
// is a range of the space's mixed-radix index: contiguous, so that the variants of one compiled program
// (the compile-time tunables lead the index) stay in one shard but at the shard's two ends.
#include <cstdint>
#include <string>
#include <string_view>

#include "variants/space.hpp"

namespace varex::variants {

struct Shard {
  std::uint32_t index = 0;  // 0 … count - 1
  std::uint32_t count = 1;

  // "K/N", as --shard takes it and the session's settings record it.
  std::string to_string() const;
  // "K/N" with 0 <= K < N <= kMaxShards; UsageError naming what is wrong otherwise.
  static Shard parse(std::string_view text);
};

inline constexpr std::uint32_t kMaxShards = 65536;

// The half-open index range [begin, end) of `space` that `shard` covers. The ranges of a shard's
// siblings are disjoint and cover [0, cardinality). They hold equal numbers of valid variants (within one)
// where the space can be walked (the spaces Space::count_valid counts exactly), else equal index ranges.
struct IndexRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};
IndexRange shard_range(const Space& space, Shard shard);

// `space` with the constraint that a point lies in the shard's range (a point is judged by its canonical
// form, so a variant belongs to exactly one shard).
Space shard_of(const Space& space, Shard shard);

}  // namespace varex::variants
