#pragma once
// Robust summaries of repeated timings: the median with a distribution-free confidence interval.
#include <cstddef>
#include <vector>

namespace varex {

struct SampleSummary {
  std::size_t count = 0;
  double median = 0;
  double ci_low = 0;  // confidence interval of the median (order statistics, no normality assumed)
  double ci_high = 0;
  double min = 0;
  double max = 0;
  double mad = 0;          // median absolute deviation, the spread reported next to the median
  double ci_coverage = 0;  // the interval's actual coverage (small samples cannot reach the target)

  // Half-width of the interval relative to the median; the repetition loop stops when it is small.
  double relative_ci() const;
};

double median(std::vector<double> values);

// `confidence` is the target coverage of the median's interval (e.g. 0.95).
SampleSummary summarize(std::vector<double> samples, double confidence = 0.95);

}  // namespace varex
