#include <gtest/gtest.h>

#include <random>

#include "base/stats.hpp"

namespace varex {
namespace {

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Stats, FewSamplesFallBackToTheirRange) {
  const SampleSummary s = summarize({5, 1, 3});
  EXPECT_DOUBLE_EQ(s.ci_low, 1);
  EXPECT_DOUBLE_EQ(s.ci_high, 5);
  EXPECT_NEAR(s.ci_coverage, 0.75, 1e-12);  // 1 - 2 * (1/8)
  EXPECT_DOUBLE_EQ(s.mad, 2);
}

TEST(Stats, IntervalNarrowsAndReachesTheTargetCoverage) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(10.0, 1.0);
  std::vector<double> samples;
  for (int i = 0; i < 200; ++i) samples.push_back(noise(rng));
  const SampleSummary s = summarize(samples, 0.95);
  EXPECT_GE(s.ci_coverage, 0.95);
  EXPECT_LT(s.ci_low, s.median);
  EXPECT_GT(s.ci_high, s.median);
  // For n = 200 the interval of the median spans roughly +-1.96 * 1.2533 / sqrt(200) around it.
  EXPECT_LT(s.ci_high - s.ci_low, 0.6);
  EXPECT_LT(s.relative_ci(), 0.03);
}

TEST(Stats, CoverageOfTheMedianIntervalHoldsEmpirically) {
  // Draw many samples of size 25 from a skewed distribution with known median ln 2 / 1 (exponential).
  std::mt19937 rng(11);
  std::exponential_distribution<double> dist(1.0);
  const double true_median = std::log(2.0);
  int covered = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(25);
    for (double& v : x) v = dist(rng);
    const SampleSummary s = summarize(x, 0.95);
    if (s.ci_low <= true_median && true_median <= s.ci_high) ++covered;
  }
  EXPECT_GE(covered / static_cast<double>(trials), 0.94);
}

}  // namespace
}  // namespace varex
