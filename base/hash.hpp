#pragma once
// Stable, platform-independent hashing for ids that are stored and compared across machines.
#include <cstdint>
#include <string>
#include <string_view>

namespace varex {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;

// 64-bit FNV-1a; chain calls by passing the previous result as `state`.
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t state = kFnvOffset);
std::uint64_t fnv1a_bytes(const void* data, std::size_t size, std::uint64_t state = kFnvOffset);

// Sixteen lower-case hex digits.
std::string hex64(std::uint64_t value);

}  // namespace varex
