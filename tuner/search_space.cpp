#include "tuner/strategy.hpp"

#include <map>

namespace varex::tuner {

SearchSpace::SearchSpace(variants::Space space, std::uint64_t seed) : space_(std::move(space)), rng_(seed) {}

std::optional<variants::Params> SearchSpace::random_unseen() {
  if (only_compiled_) {
    std::vector<const variants::Params*> left;
    for (const auto& p : of_compiled_) {
      if (!seen(p)) left.push_back(&p);
    }
    if (left.empty()) return std::nullopt;
    return *left[std::uniform_int_distribution<std::size_t>(0, left.size() - 1)(rng_)];
  }
  const std::uint64_t n = space_.cardinality();
  if (n == 0) return std::nullopt;
  std::uniform_int_distribution<std::uint64_t> pick(0, n - 1);
  // Rejection sampling is cheap while valid, unseen points are common. A point stands for its canonical
  // form, so a part of the space with inactive tunables is drawn as often as its share of the product…
  for (int attempt = 0; attempt < 4096; ++attempt) {
    const std::uint64_t index = pick(rng_);
    if (seen_.count(index)) continue;
    variants::Params p = space_.at(index);
    if (!space_.valid_at(p) || seen_.count(space_.canonical_index_at(index, p))) continue;
    return space_.canonical(p);
  }
  // …and a scan from a random start finds the rare ones, or proves there are none left.
  const std::uint64_t start = pick(rng_);
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::uint64_t index = (start + k) % n;
    if (seen_.count(index)) continue;
    variants::Params p = space_.at(index);
    if (space_.valid(p) && space_.is_canonical(p)) return p;
  }
  return std::nullopt;
}

std::vector<variants::Params> SearchSpace::unseen_neighbours(const variants::Params& params) const {
  std::vector<variants::Params> out;
  for (variants::Params& n : space_.neighbours(params)) {
    if (!seen(n) && (!only_compiled_ || compiled(n))) out.push_back(std::move(n));
  }
  return out;
}

void SearchSpace::note_compiled(const variants::Params& params) {
  const variants::Params part = space_.compile_part(params);
  if (!compiled_.insert(variants::canonical(part)).second) return;
  std::map<std::string, std::string> pins;
  for (const auto& [name, value] : part) pins[name] = variants::to_string(value);
  for (variants::Params& p : space_.enumerate(pins)) of_compiled_.push_back(std::move(p));
}

bool SearchSpace::compiled(const variants::Params& params) const {
  return compiled_.count(variants::canonical(space_.compile_part(params))) > 0;
}

bool SearchSpace::seen(const variants::Params& params) const {
  return seen_.count(space_.canonical_index(params)) > 0;
}

void SearchSpace::mark(const variants::Params& params) {
  seen_.insert(space_.canonical_index(params));
}

}  // namespace varex::tuner
