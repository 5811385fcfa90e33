#include "base/hash.hpp"

#include <cstdio>

namespace varex {

std::uint64_t fnv1a_bytes(const void* data, std::size_t size, std::uint64_t state) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    state ^= bytes[i];
    state *= 0x100000001b3ULL;
  }
  return state;
}

std::uint64_t fnv1a(std::string_view bytes, std::uint64_t state) {
  return fnv1a_bytes(bytes.data(), bytes.size(), state);
}

std::string hex64(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace varex
