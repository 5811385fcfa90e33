#pragma once
// Host references of the string operators, sharing nothing with the device path: byte comparison for
// equality and prefix, a backtracking matcher for LIKE, and RE2 (Debian's libre2) for regular
// expressions. Each returns the result bitmap (bit r%8 of byte r/8).
#include <cstdint>
#include <string>
#include <vector>

#include "operators/common/toolkit.hpp"
#include "operators/strings/string_columns.hpp"

namespace varex::operators {

enum class StringOp { Equal, Prefix, Like, Regex };

// The LIKE semantics of the operator: `%` any bytes, `_` one byte, a backslash escapes the next byte.
bool like_matches(std::string_view pattern, std::string_view text);

std::vector<std::uint8_t> string_reference(StringOp op, const std::string& operand,
                                           const datasets::StringColumn& column);

}  // namespace varex::operators
