#pragma once
// A read-only map from distinct int32 keys to their position in a list, for the host references of the
// hash operators: open addressing over a power of two twice the key count, hashed with splitmix64 (the
// device kernels share none of this).
#include <cstdint>
#include <limits>
#include <vector>

#include "datasets/int_columns.hpp"

namespace varex::harness {

class KeyIndex {
 public:
  static constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

  // `keys` must be distinct; position i of the list answers keys[i].
  explicit KeyIndex(const std::vector<std::int32_t>& keys) {
    std::uint64_t slots = 16;
    while (slots < 2 * keys.size()) slots *= 2;
    mask_ = slots - 1;
    slot_keys_.resize(slots);
    positions_.assign(slots, kAbsent);
    for (std::uint32_t i = 0; i < keys.size(); ++i) {
      std::uint64_t s = slot(keys[i]);
      while (positions_[s] != kAbsent) s = (s + 1) & mask_;
      slot_keys_[s] = keys[i];
      positions_[s] = i;
    }
  }

  std::uint32_t find(std::int32_t key) const {
    for (std::uint64_t s = slot(key);; s = (s + 1) & mask_) {
      if (positions_[s] == kAbsent) return kAbsent;
      if (slot_keys_[s] == key) return positions_[s];
    }
  }

 private:
  std::uint64_t slot(std::int32_t key) const {
    return datasets::splitmix64(static_cast<std::uint32_t>(key)) & mask_;
  }
  std::uint64_t mask_ = 0;
  std::vector<std::int32_t> slot_keys_;
  std::vector<std::uint32_t> positions_;
};

}  // namespace varex::harness
