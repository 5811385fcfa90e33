#include "datasets/keys.hpp"

#include <cmath>
#include <memory>
#include <numeric>

#include "datasets/int_columns.hpp"
#include "datasets/row_random.hpp"

namespace varex::datasets {

std::int32_t key_of(std::uint32_t index, std::uint64_t seed) {
  // xor with a constant, multiplication by an odd constant and xor-shifts are each invertible on 32 bits.
  std::uint32_t x = index ^ static_cast<std::uint32_t>(splitmix64(seed));
  x *= 0x9E3779B1u;
  x ^= x >> 15;
  x *= 0x85EBCA77u;
  x ^= x >> 13;
  x *= 0xC2B2AE3Du;
  x ^= x >> 16;
  return static_cast<std::int32_t>(x);
}

namespace {

// log1p(x)/x and expm1(x)/x, continuous at 0.
double helper1(double x) {
  return std::fabs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}
double helper2(double x) {
  return std::fabs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x));
}

}  // namespace

std::uint64_t draw_index(RowRandom& r, std::uint64_t distinct, const ZipfSampler* zipf) {
  if (zipf) return zipf->sample([&] { return r.uniform(); }) - 1;
  return r.next() % distinct;
}

// An affine permutation of the rows spreads the guaranteed indices over the column.
std::vector<std::int32_t> keys_over(std::uint64_t rows, std::uint64_t distinct, double zipf,
                                    std::uint64_t seed) {
  std::vector<std::int32_t> out(rows);
  if (rows == 0) return out;
  std::unique_ptr<ZipfSampler> sampler;
  if (zipf > 0) sampler = std::make_unique<ZipfSampler>(distinct, zipf);
  std::uint64_t a = (splitmix64(seed + 7) | 1) % rows;
  while (std::gcd(a, rows) != 1) a = (a + 1) % rows;
  const std::uint64_t b = splitmix64(seed + 11) % rows;
  parallel_rows(rows, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      RowRandom r(seed, i, kKeyRowStride);
      const std::uint64_t index = i < distinct ? i : draw_index(r, distinct, sampler.get());
      out[(static_cast<unsigned __int128>(i) * a + b) % rows] =
          key_of(static_cast<std::uint32_t>(index), seed);
    }
  });
  return out;
}

ZipfSampler::ZipfSampler(std::uint64_t n, double s) : n_(n), exponent_(s) {
  h_integral_x1_ = h_integral(1.5) - 1.0;
  h_integral_n_ = h_integral(static_cast<double>(n) + 0.5);
  s_ = 2.0 - h_integral_inverse(h_integral(2.5) - h(2.0));
}

double ZipfSampler::h(double x) const {
  return std::exp(-exponent_ * std::log(x));
}

double ZipfSampler::h_integral(double x) const {
  const double log_x = std::log(x);
  return helper2((1.0 - exponent_) * log_x) * log_x;
}

double ZipfSampler::h_integral_inverse(double x) const {
  double t = x * (1.0 - exponent_);
  if (t < -1.0) t = -1.0;
  return std::exp(helper1(t) * x);
}

}  // namespace varex::datasets
