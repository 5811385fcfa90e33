// histogram on the OpenCL CPU device: the reference on values at the buckets' edges, and every variant
// (global and local bins, one and several local slices, every launch shape) on awkward sizes, against
// counts computed here by binary search over the buckets' lower bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "base/errors.hpp"
#include "datasets/int_columns.hpp"
#include "operators/histogram/histogram.hpp"
#include "support.hpp"

namespace varex::operators {
namespace {

// The buckets' lower bounds (INT32_MIN + b * 2^32 / buckets) and the bucket of each value by search among
// them: no bit trick, no offset arithmetic.
std::vector<std::uint32_t> counted(const std::vector<std::int32_t>& column, std::uint32_t buckets) {
  std::vector<std::int64_t> lower;
  for (std::uint64_t b = 0; b < buckets; ++b)
    lower.push_back(std::numeric_limits<std::int32_t>::min() +
                    static_cast<std::int64_t>(b * ((std::uint64_t{1} << 32) / buckets)));
  std::vector<std::uint32_t> counts(buckets, 0);
  for (const std::int32_t v : column)
    ++counts[static_cast<std::size_t>(std::upper_bound(lower.begin(), lower.end(), v) - lower.begin() - 1)];
  return counts;
}

Digest digest_of(const std::vector<std::uint32_t>& counts) {
  Digest d;
  for (std::uint64_t i = 0; i < counts.size(); ++i) d.checksum += (i + 1) * (counts[i] * 1000003ull);
  d.rows = counts.size();
  return d;
}

TEST(Histogram, TheReferenceCountsValuesAtTheBucketsEdges) {
  const std::int32_t lo = std::numeric_limits<std::int32_t>::min(),
                     hi = std::numeric_limits<std::int32_t>::max();
  const std::vector<std::int32_t> edges{lo, lo + 1, -1, 0, 1, hi - 1, hi, 1 << 30, -(1 << 30)};
  for (const std::uint32_t buckets : {2u, 4u, 256u, 65536u}) {
    EXPECT_EQ(histogram_reference(edges, buckets), counted(edges, buckets)) << buckets << " buckets";
  }
  const std::vector<std::uint32_t> two = histogram_reference(edges, 2);
  EXPECT_EQ(two[0], 4u);  // lo, lo + 1, -1, -(1 << 30)
  EXPECT_EQ(two[1], 5u);
}

TEST(Histogram, EveryVariantOnAwkwardSizes) {
  for (const std::uint64_t rows : {1ull, 1000ull, 4099ull}) {
    for (const std::uint32_t buckets : {2u, 2048u}) {  // one local slice, and two
      WorkloadOptions options;
      options.flags = {{"rows", std::to_string(rows)}, {"buckets", std::to_string(buckets)}, {"seed", "5"}};
      const HistogramOperator op;
      const datasets::WorkloadSpec spec = op.workload(options);
      const Digest want = digest_of(counted(datasets::uniform_int32(rows, 5), buckets));
      // Every compile-time variant, each under a few launch shapes.
      test::verify_variants(op, spec, want, {}, [](std::vector<variants::Params> points) {
        return test::pairwise(points, {"bins", "ept", "local", "grid"});
      });
    }
  }
}

TEST(Histogram, BucketsThatAreNoPowerOfTwoAreRefused) {
  const HistogramOperator op;
  for (const char* buckets : {"1", "3", "300", "131072"}) {
    WorkloadOptions options;
    options.flags = {{"rows", "100"}, {"buckets", buckets}};
    EXPECT_THROW(op.workload(options), UsageError) << buckets;
  }
}

}  // namespace
}  // namespace varex::operators
