#include "operators/common/relations/sorted_pairs.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <thread>
#include <vector>

#include "datasets/int_columns.hpp"
#include "datasets/keys.hpp"

namespace varex::datasets {

namespace {

using Tuple = std::array<std::uint32_t, 4>;  // key and up to three values; unused words stay 0

// Draw `d` of row `row` of a stream: independent for every (stream, row, d).
std::uint64_t draw(std::uint64_t stream, std::uint64_t row, std::uint64_t d) {
  return splitmix64(stream ^ splitmix64(row * 0xd1342543de82ef95ULL + d));
}

std::vector<Tuple> tuples_of(const Relation& r) {
  std::vector<Tuple> t(r.rows(), Tuple{});
  for (std::uint32_t c = 0; c < r.attributes(); ++c)
    for (std::uint64_t i = 0; i < r.rows(); ++i) t[i][c] = r.columns[c][i];
  return t;
}

// Sorts in one chunk per core, then merges the chunks pairwise.
void parallel_sort(std::vector<Tuple>& t) {
  const std::uint64_t n = t.size();
  const std::uint64_t chunks = std::clamp<std::uint64_t>(std::thread::hardware_concurrency(), 1, 64);
  if (n < (1u << 16) || chunks == 1) {
    std::sort(t.begin(), t.end());
    return;
  }
  std::vector<std::uint64_t> bounds;
  for (std::uint64_t c = 0; c <= chunks; ++c) bounds.push_back(n * c / chunks);
  {
    std::vector<std::jthread> sorters;
    for (std::uint64_t c = 0; c < chunks; ++c)
      sorters.emplace_back([&, c] { std::sort(t.begin() + bounds[c], t.begin() + bounds[c + 1]); });
  }
  for (std::uint64_t width = 1; width < chunks; width *= 2) {
    std::vector<std::jthread> mergers;
    for (std::uint64_t c = 0; c + width < chunks; c += 2 * width) {
      const auto first = t.begin() + bounds[c], middle = t.begin() + bounds[c + width],
                 last = t.begin() + bounds[std::min(c + 2 * width, chunks)];
      mergers.emplace_back([=] { std::inplace_merge(first, middle, last); });
    }
  }
}

}  // namespace

void sort_tuples(Relation& relation) {
  std::vector<Tuple> t = tuples_of(relation);
  parallel_sort(t);
  for (std::uint32_t c = 0; c < relation.attributes(); ++c)
    for (std::uint64_t i = 0; i < t.size(); ++i) relation.columns[c][i] = t[i][c];
}

std::optional<std::uint64_t> first_unsorted(const Relation& relation, SortOrder order) {
  const std::uint32_t compared = order == SortOrder::ByKey ? 1 : relation.attributes();
  for (std::uint64_t i = 1; i < relation.rows(); ++i) {
    for (std::uint32_t c = 0; c < compared; ++c) {
      const std::uint32_t before = relation.columns[c][i - 1], here = relation.columns[c][i];
      if (here < before) return i;
      if (here > before) break;
    }
  }
  return std::nullopt;
}

std::pair<Relation, Relation> generate_sorted_pair(const SortedPairShape& shape) {
  if (shape.values < 1 || shape.values > 3 || shape.distinct < 1 || shape.distinct > shape.rows ||
      shape.distinct >= (1ULL << 32)) {
    throw std::invalid_argument("generate_sorted_pair: values 1-3 and 1 <= distinct <= rows < 2^32");
  }
  const std::uint64_t base = splitmix64(shape.seed);
  Relation left, right;
  left.columns.assign(1 + shape.values, std::vector<std::uint32_t>(shape.rows));
  right.columns.assign(1 + shape.values, std::vector<std::uint32_t>(shape.rows2));
  const std::vector<std::int32_t> keys = keys_over(shape.rows, shape.distinct, shape.zipf, shape.seed);
  parallel_rows(shape.rows, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t i = begin; i < end; ++i) {
      left.columns[0][i] = static_cast<std::uint32_t>(keys[i]);
      for (std::uint32_t c = 1; c <= shape.values; ++c)
        left.columns[c][i] = static_cast<std::uint32_t>(draw(base + c, i, 0));
    }
  });
  // Keys past the `distinct` indices of key_of() never occur on the left.
  const std::uint64_t absent = (1ULL << 32) - shape.distinct;
  const std::uint64_t right_base = splitmix64(base ^ 0x52494748ULL);
  parallel_rows(shape.rows2, [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t j = begin; j < end; ++j) {
      const double u = static_cast<double>(draw(right_base, j, 0) >> 11) * 0x1.0p-53;
      const bool match = u < shape.match_ratio;
      const std::uint64_t partner = draw(right_base, j, 1) % shape.rows;
      const bool equal = match && (draw(right_base, j, 2) & 1);
      right.columns[0][j] =
          match ? left.columns[0][partner]
                : static_cast<std::uint32_t>(
                      key_of(static_cast<std::uint32_t>(shape.distinct + draw(right_base, j, 3) % absent),
                             shape.seed));
      for (std::uint32_t c = 1; c <= shape.values; ++c) {
        right.columns[c][j] =
            equal ? left.columns[c][partner] : static_cast<std::uint32_t>(draw(right_base + c, j, 4));
      }
    }
  });
  sort_tuples(left);
  sort_tuples(right);
  return {std::move(left), std::move(right)};
}

}  // namespace varex::datasets
