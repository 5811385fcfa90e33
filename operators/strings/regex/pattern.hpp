#pragma once
// Patterns of the string operators as syntax trees over bytes: POSIX extended regular expressions and SQL
// LIKE. Both become one automaton (regex/automaton.hpp); the kernels never see a pattern.
//
// Regular expressions (bytes, not characters): literals; `.` (any byte); bracket expressions with ranges,
// negation and the POSIX classes ([:alpha:] …), a backslash escaping the next byte inside them too;
// `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}` (m, n ≤ 255); `|`; groups; anchors `^` and `$`; escapes `\.`
// (any punctuation), `\d \D \w \W \s \S`, `\n \t \r \f \v`, `\xHH`. LIKE: `%` (any bytes), `_` (one byte),
// a backslash escaping the next byte; everything else literal; the whole string must match.
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace varex::regex {

using ByteSet = std::bitset<256>;

struct Node {
  enum class Kind { Empty, Bytes, Concat, Alternation, Repeat, Begin, End };
  Kind kind = Kind::Empty;
  ByteSet bytes;              // Bytes: one byte out of the set
  std::vector<int> children;  // Concat, Alternation: any number; Repeat: one
  int min = 0, max = 0;       // Repeat: max < 0 is unbounded
  // Begin and End are zero-width: the start and the end of the string.
};

// A syntax tree in an arena; `root` indexes `nodes`. A pattern matches a string when it matches anywhere
// in it (search semantics); LIKE patterns are anchored at both ends to get their full-match meaning.
struct Pattern {
  std::vector<Node> nodes;
  int root = 0;
};

// Throws UsageError naming the problem and its byte offset.
Pattern parse_regex(std::string_view text);
Pattern parse_like(std::string_view text);

// The regular expression that matches what a LIKE pattern matches (for engines that only take those).
std::string like_to_regex(std::string_view like);

}  // namespace varex::regex
