#include "variants/shard.hpp"

#include <charconv>
#include <memory>

#include "base/errors.hpp"

namespace varex::variants {

std::string Shard::to_string() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

Shard Shard::parse(std::string_view text) {
  const std::string shown(text);
  const auto slash = text.find('/');
  auto number = [&](std::string_view part, std::uint32_t& out) {
    const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), out);
    return !part.empty() && error == std::errc() && end == part.data() + part.size();
  };
  Shard shard;
  if (slash == std::string_view::npos || !number(text.substr(0, slash), shard.index) ||
      !number(text.substr(slash + 1), shard.count))
    throw UsageError("--shard: '" + shown + "' is not K/N (shard K of N, counted from 0)");
  if (shard.count == 0 || shard.count > kMaxShards)
    throw UsageError("--shard: " + shown + " has " + std::to_string(shard.count) + " shards; give 1 to " +
                     std::to_string(kMaxShards));
  if (shard.index >= shard.count)
    throw UsageError("--shard: " + shown + " names shard " + std::to_string(shard.index) + " of " +
                     std::to_string(shard.count) + "; shards count from 0 to " +
                     std::to_string(shard.count - 1));
  return shard;
}

IndexRange shard_range(const Space& space, Shard shard) {
  const std::uint64_t n = space.cardinality();
  const auto split = [&](std::uint64_t total, std::uint32_t k) {
    // k * total / count without overflow: total < 2^64 and count <= 2^16.
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(total) * k / shard.count);
  };
  if (n > Space::kWalkLimit) return {split(n, shard.index), split(n, shard.index + 1)};
  // Balanced by variants: the shard's range starts at the index of its first variant by rank and ends at
  // the next shard's start. The first shard starts at 0 and the last ends at the cardinality, so the ranges
  // cover the invalid points before and after the variants too.
  const std::uint64_t variants = space.count_valid();
  const std::uint64_t first = split(variants, shard.index);
  const std::uint64_t last = split(variants, shard.index + 1);
  IndexRange range{shard.index == 0 ? 0 : n, n};
  std::uint64_t rank = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const Params p = space.at(i);
    if (!space.valid(p) || !space.is_canonical(p)) continue;
    if (rank == first && shard.index > 0) range.begin = i;
    if (rank == last && shard.index + 1 < shard.count) {
      range.end = i;
      break;
    }
    ++rank;
  }
  // A shard without variants (more shards than variants) is an empty range or one of invalid points.
  return range;
}

Space shard_of(const Space& space, Shard shard) {
  const IndexRange range = shard_range(space, shard);
  // The constraint keeps a copy of the space without it, to index points the way the ranges were cut.
  auto indexing = std::make_shared<const Space>(space);
  return space.with_constraint({"outside shard " + shard.to_string() + " (indices " +
                                    std::to_string(range.begin) + " to " + std::to_string(range.end) +
                                    " of the space)",
                                [indexing, range](const Params& p) {
                                  const std::uint64_t i = indexing->index_of(indexing->canonical(p));
                                  return range.begin <= i && i < range.end;
                                }});
}

}  // namespace varex::variants
