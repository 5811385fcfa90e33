#include "operators/common/hash/hash_columns.hpp"

#include <memory>

#include "datasets/int_columns.hpp"
#include "datasets/keys.hpp"
#include "datasets/row_random.hpp"

namespace varex::datasets {

JoinColumns join_columns(std::uint64_t rows, std::uint64_t rows2, std::uint64_t distinct, double match_ratio,
                         double zipf, std::uint64_t seed) {
  JoinColumns c;
  c.build = keys_over(rows, distinct, zipf, seed);
  c.probe.resize(rows2);
  std::unique_ptr<ZipfSampler> sampler;
  if (zipf > 0 && distinct > 0) sampler = std::make_unique<ZipfSampler>(distinct, zipf);
  const std::uint64_t absent = (1ULL << 32) - distinct;  // indices past the build keys
  const std::uint64_t probe_seed = splitmix64(seed ^ 0x5bd1e995ULL);
  parallel_rows(rows2, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t j = begin; j < end; ++j) {
      RowRandom r(probe_seed, j, kKeyRowStride);
      const bool match = distinct > 0 && r.uniform() < match_ratio;
      const std::uint64_t index =
          match ? draw_index(r, distinct, sampler.get()) : distinct + r.next() % absent;
      c.probe[j] = key_of(static_cast<std::uint32_t>(index), seed);
    }
  });
  return c;
}

GroupColumns group_columns(std::uint64_t rows, std::uint64_t distinct, double zipf, std::uint64_t seed) {
  GroupColumns c;
  c.keys = keys_over(rows, distinct, zipf, seed);
  c.values = uniform_int32(rows, splitmix64(seed ^ 0x27d4eb2fULL));
  return c;
}

}  // namespace varex::datasets
