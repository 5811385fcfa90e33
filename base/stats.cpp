#include "base/stats.hpp"

#include <algorithm>
#include <cmath>

namespace varex {

double SampleSummary::relative_ci() const {
  if (median <= 0) return 0;
  return (ci_high - ci_low) / (2.0 * median);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

namespace {

// P(X <= k) for X ~ Binomial(n, 1/2), in log space so that large n stays exact enough.
double binomial_half_cdf(std::size_t n, std::size_t k) {
  double total = 0;
  for (std::size_t i = 0; i <= k && i <= n; ++i) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) -
                            static_cast<double>(n) * std::log(2.0);
    total += std::exp(log_term);
  }
  return std::min(total, 1.0);
}

}  // namespace

SampleSummary summarize(std::vector<double> samples, double confidence) {
  SampleSummary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = median(samples);
  std::vector<double> deviations;
  deviations.reserve(n);
  for (double v : samples) deviations.push_back(std::fabs(v - s.median));
  s.mad = median(deviations);

  // The interval [x_(l), x_(n-l+1)] (1-based) covers the median with probability 1 - 2 P(X <= l-1).
  // Take the narrowest one that still reaches the target; with few samples fall back to [min, max].
  std::size_t best_l = 1;
  for (std::size_t l = 1; 2 * l <= n; ++l) {
    if (1.0 - 2.0 * binomial_half_cdf(n, l - 1) >= confidence)
      best_l = l;
    else
      break;
  }
  s.ci_low = samples[best_l - 1];
  s.ci_high = samples[n - best_l];
  s.ci_coverage = n >= 2 ? 1.0 - 2.0 * binomial_half_cdf(n, best_l - 1) : 0.0;
  return s;
}

}  // namespace varex
