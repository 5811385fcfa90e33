// The selection predicate's semantics, checked without a device: the kernels' folded range against the
// flag-by-flag reference, and the digest against a naive count.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "base/errors.hpp"
#include "harness/outputs/bitmap.hpp"
#include "operators/selection/selection.hpp"

namespace varex::operators {
// The harness pieces this file uses beyond the toolkit (operators/common/toolkit.hpp).
using harness::bitmap_digest;
}  // namespace varex::operators

namespace varex::operators {
namespace {

constexpr std::int32_t kInt32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kInt32Max = std::numeric_limits<std::int32_t>::max();

bool kernel_matches(const KernelRange& r, std::int32_t x) {
  return ((x >= r.lo) && (x <= r.hi)) != (r.neg != 0);
}

std::vector<SelectionQuery> all_queries(const std::vector<std::int32_t>& bounds) {
  std::vector<SelectionQuery> out;
  std::vector<std::optional<std::int32_t>> options{std::nullopt};
  for (std::int32_t b : bounds) options.push_back(b);
  for (const auto& lo : options) {
    for (const auto& hi : options) {
      for (int flags = 0; flags < 8; ++flags) {
        SelectionQuery q;
        q.lo = lo;
        q.hi = hi;
        q.lo_inclusive = flags & 1;
        q.hi_inclusive = flags & 2;
        q.negate = flags & 4;
        out.push_back(q);
      }
    }
  }
  return out;
}

TEST(SelectionPredicate, KernelRangeAgreesWithTheFlagsOnEdgeValues) {
  const std::vector<std::int32_t> bounds{kInt32Min, kInt32Min + 1, -1, 0, 1, 7, kInt32Max - 1, kInt32Max};
  const std::vector<std::int32_t> probes{kInt32Min, kInt32Min + 1, kInt32Min + 2, -2,       -1, 0, 1, 2, 6, 7,
                                         8,         kInt32Max - 2, kInt32Max - 1, kInt32Max};
  for (const SelectionQuery& q : all_queries(bounds)) {
    const KernelRange r = q.inclusive();
    for (std::int32_t x : probes) {
      ASSERT_EQ(kernel_matches(r, x), q.matches(x)) << q.to_json().dump() << " x=" << x;
    }
  }
}

TEST(SelectionPredicate, ReferenceFollowsTheSourceFlags) {
  SelectionQuery q;
  q.lo = 10;
  q.hi = 20;
  EXPECT_TRUE(q.matches(10));
  EXPECT_TRUE(q.matches(20));
  q.lo_inclusive = false;
  q.hi_inclusive = false;
  EXPECT_FALSE(q.matches(10));
  EXPECT_FALSE(q.matches(20));
  EXPECT_TRUE(q.matches(11));
  q.negate = true;
  EXPECT_TRUE(q.matches(10));
  EXPECT_FALSE(q.matches(15));
  SelectionQuery none;
  EXPECT_TRUE(none.matches(kInt32Min));
  EXPECT_TRUE(none.matches(kInt32Max));
}

TEST(SelectionPredicate, SelectivityQueriesSelectTheRequestedFraction) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::int32_t> dist(kInt32Min, kInt32Max);
  for (double s : {0.0, 0.01, 0.25, 0.5, 1.0}) {
    const SelectionQuery q = SelectionQuery::for_selectivity(s);
    int hits = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) hits += q.matches(dist(rng));
    EXPECT_NEAR(hits / static_cast<double>(n), s, 0.005) << s;
  }
  EXPECT_THROW(SelectionQuery::for_selectivity(1.5), UsageError);
  EXPECT_THROW(SelectionQuery::for_selectivity(-0.1), UsageError);
}

TEST(SelectionPredicate, QueryParsingRejectsBadInput) {
  EXPECT_EQ(SelectionQuery::parse({{"lo", "-5"}, {"hi_inclusive", "false"}}).lo, -5);
  EXPECT_THROW(SelectionQuery::parse({{"low", "1"}}), UsageError);
  EXPECT_THROW(SelectionQuery::parse({{"lo", "abc"}}), UsageError);
  EXPECT_THROW(SelectionQuery::parse({{"hi", "3000000000"}}), UsageError);
  EXPECT_THROW(SelectionQuery::parse({{"negate", "maybe"}}), UsageError);
}

TEST(SelectionPredicate, JsonRoundTrip) {
  for (const SelectionQuery& q : all_queries({kInt32Min, 0, kInt32Max})) {
    const SelectionQuery back = SelectionQuery::from_json(q.to_json());
    EXPECT_EQ(back.to_json(), q.to_json());
  }
}

TEST(SelectionPredicate, DigestCountsRowsAndSumsIndices) {
  std::mt19937 rng(5);
  for (std::uint64_t rows : {0ULL, 1ULL, 7ULL, 8ULL, 9ULL, 1000ULL, 4099ULL}) {
    std::vector<std::uint8_t> bitmap((rows + 7) / 8 + 1);
    for (auto& b : bitmap) b = static_cast<std::uint8_t>(rng());
    Digest naive;
    for (std::uint64_t r = 0; r < rows; ++r) {
      if (bitmap[r / 8] >> (r % 8) & 1) {
        ++naive.rows;
        naive.checksum += r;
      }
    }
    EXPECT_EQ(bitmap_digest(bitmap.data(), rows), naive) << rows;  // bits past `rows` are ignored
  }
}

}  // namespace
}  // namespace varex::operators
