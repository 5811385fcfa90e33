#pragma once
// Key distributions the families share (the hash join's and group-by's columns, the relations' sorted pairs).
// Keys are a seeded bijection of indices onto all of
// int32, so that `distinct` indices give exactly `distinct` keys spread over the whole range (negative
// and extreme values included) and indices past them give keys that are certainly absent. Indices are
// drawn uniformly or Zipf-skewed; every row is generated independently (counter-based), in parallel.
#include <cstdint>
#include <vector>

#include "datasets/row_random.hpp"

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

// An index in [0, distinct) for one row's draws: uniform, or rank - 1 of a Zipf draw (`zipf` null: uniform).
std::uint64_t draw_index(RowRandom& r, std::uint64_t distinct, const ZipfSampler* zipf);

// The stride of the rows' random streams that key columns draw from (RowRandom).
inline constexpr std::uint64_t kKeyRowStride = 0xd1342543de82ef95ULL;

}  // namespace varex::datasets
