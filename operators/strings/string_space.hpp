#pragma once
#include "variants/space.hpp"

namespace varex::operators {

// The string operators of document 003 (DogQC's string selection with lane refill). `automaton` adds the
// layout tunable of the automaton operators (LIKE, regular expressions); `like` adds LIKE's algorithm (the
// automaton, or DogQC's segments). The default point is the naive kernel over the automaton, one byte per
// check, the driver's local size and one work-item per row.
variants::Space string_space(const variants::SpaceContext& context, const std::string& op, bool automaton,
                             bool like);

}  // namespace varex::operators
