#pragma once
// How varex words a refusal: one voice for its own messages and CLI11's (base/text.hpp's printable() keeps
// each on one line).
#include <string>

namespace varex::cli {

// A parser's message (CLI11's "Value 0 not in range 1 to 10000", "At Most 1 required …") in varex's words;
// other messages unchanged.
std::string rephrase_parse_error(const std::string& message);

}  // namespace varex::cli
