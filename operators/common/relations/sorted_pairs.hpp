#pragma once
// Two relations for Red Fox's JOIN and set operations (document 002, sec. 3.2.4-3.2.5), which expect
// their inputs sorted: generated with a controlled key distribution and overlap, then sorted by tuple (key,
// then values), and the order checks that user files for those operators must pass.
#include <cstdint>
#include <optional>
#include <utility>

#include "operators/common/relations/relations.hpp"

namespace varex::datasets {

// The left relation: `rows` tuples whose keys take exactly `distinct` values (each at least once, the rest
// drawn uniformly, or Zipf-skewed with exponent `zipf` > 0), spread over all 2^32 keys; values uniform.
// The right relation: `rows2` tuples; with probability `match_ratio` a tuple takes the key of a left tuple
// drawn uniformly (so the right keys follow the left's skew) and, with probability 1/2, its values too (an
// equal tuple, which the set operations match); otherwise its key occurs nowhere on the left and its
// values are drawn. Both sorted by tuple. Counter-based: the same shape always gives the same pair.
struct SortedPairShape {
  std::uint64_t rows = 0, rows2 = 0;
  std::uint32_t values = 1;    // 1 to 3 per tuple
  std::uint64_t distinct = 0;  // 1 .. rows
  double match_ratio = 1.0;
  double zipf = 0.0;
  std::uint64_t seed = 42;
};
std::pair<Relation, Relation> generate_sorted_pair(const SortedPairShape& shape);

// Sorts the tuples by key, then by each value in turn (ascending), on all host cores.
void sort_tuples(Relation& relation);

// The 0-based index of the first tuple that is out of order (smaller than the tuple before it), comparing
// keys only or whole tuples (key, then values); nullopt when the relation is sorted.
enum class SortOrder { ByKey, ByTuple };
std::optional<std::uint64_t> first_unsorted(const Relation& relation, SortOrder order);

}  // namespace varex::datasets
