#pragma once
// How much a tuning run may spend: evaluations ("200"), seconds ("90s"), a share of the exhaustive cost
// ("10%"), or everything ("all"). Compile time counts: an evaluation's cost includes its compilation.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace varex::tuner {

struct Budget {
  enum class Kind { Unlimited, Evaluations, Seconds, Fraction };
  Kind kind = Kind::Unlimited;
  double value = 0;  // evaluations, seconds, or a fraction in (0, 1]

  static Budget parse(std::string_view text);  // UsageError when malformed
  std::string to_string() const;
  // The budget in seconds, given the exhaustive cost (infinite for evaluation budgets and Unlimited).
  double seconds(double exhaustive_cost_s) const;
};

}  // namespace varex::tuner
