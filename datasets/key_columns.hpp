#pragma once
// Key columns for the hash join and the group-by. Keys are a seeded bijection of indices onto all of
// int32, so that `distinct` indices give exactly `distinct` keys spread over the whole range (negative
// and extreme values included) and indices past them give keys that are certainly absent. Indices are
// drawn uniformly or Zipf-skewed; every row is generated independently (counter-based), in parallel.
#include <cstdint>
#include <vector>

namespace varex::datasets {

// A bijection of [0, 2^32) onto the int32 values, different for every seed.
std::int32_t key_of(std::uint32_t index, std::uint64_t seed);

// Zipf's law over the ranks 1..n with exponent s > 0 (rank 1 most frequent), by rejection-inversion
// (Hörmann and Derflinger 1996): constant time per sample for any n.
class ZipfSampler {
 public:
  ZipfSampler(std::uint64_t n, double s);
  // `next_uniform` returns independent doubles in [0, 1).
  template <typename Uniform>
  std::uint64_t sample(Uniform&& next_uniform) const {
    for (;;) {
      const double u = h_integral_n_ + next_uniform() * (h_integral_x1_ - h_integral_n_);
      const double x = h_integral_inverse(u);
      double k = static_cast<double>(static_cast<std::uint64_t>(x + 0.5));
      if (k < 1) k = 1;
      if (k > static_cast<double>(n_)) k = static_cast<double>(n_);
      if (k - x <= s_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<std::uint64_t>(k);
    }
  }

 private:
  double h(double x) const;
  double h_integral(double x) const;
  double h_integral_inverse(double x) const;
  std::uint64_t n_;
  double exponent_;
  double h_integral_x1_, h_integral_n_, s_;
};

// `rows` keys over exactly `distinct` indices mapped through key_of(): row i < distinct takes index i (every
// index occurs), the others a drawn one (uniform, or Zipf with exponent `zipf` > 0); rows permuted.
std::vector<std::int32_t> keys_over(std::uint64_t rows, std::uint64_t distinct, double zipf,
                                    std::uint64_t seed);

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
