#pragma once
// DogQC's LIKE (document 003, ch. 7 and 11): no automaton. A pattern is its literal segments between `%`,
// each a fixed-length run of tokens (a byte, or `_` for any one byte), matched by direct byte comparison: the
// first segment at the string's start unless the pattern starts with `%`, the last at its end unless the
// pattern ends with `%`, and each segment between at its leftmost place after the one before. Leftmost is
// enough: every segment has a fixed length, so the earliest place also ends earliest and leaves the most room
// for the segments after it. The semantics are parse_like's: `%` any bytes, `_` one byte, a backslash
// escapes the next byte (a trailing backslash is an error).
#include <cstdint>
#include <string_view>
#include <vector>

namespace varex::regex {

constexpr std::int32_t kAnyByte = 256;  // the token of `_`

struct LikeSegments {
  std::vector<std::int32_t> tokens;   // every segment's tokens, one after the other
  std::vector<std::uint32_t> starts;  // segment k's first token; starts.back() == tokens.size()
  bool anchored_start = true;         // the pattern does not start with `%`
  bool anchored_end = true;           // nor end with it
  bool has_percent = false;           // a pattern of only `%` matches every string

  std::size_t segments() const { return starts.size() - 1; }
  bool matches(std::string_view text) const;  // the device kernel's walk, on the host (tests)
  // The image the kernel reads (int32): [0] tokens, [1] segments, [2] flags (kSegAnchoredStart,
  // kSegAnchoredEnd, kSegHasPercent), [3] where the segments' starts begin (segments + 1 of them),
  // [4] where the tokens begin; kSegHeader words of header. A token is packed with what the kernel needs
  // at each byte, one load a step: the byte or kAnyByte in bits 0-8, kSegLastToken, and its segment's
  // number from bit kSegNumberShift.
  std::vector<std::int32_t> image() const;
};

constexpr int kSegHeader = 8;
constexpr std::int32_t kSegAnchoredStart = 1, kSegAnchoredEnd = 2, kSegHasPercent = 4;
constexpr std::int32_t kSegLastToken = 1 << 9;
constexpr int kSegNumberShift = 10;

LikeSegments like_segments(std::string_view pattern);  // UsageError for a trailing backslash

}  // namespace varex::regex
