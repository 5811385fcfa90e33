#pragma once
// The floor operators stand on: the harness's toolkit (Operator, PreparedRun, Engine, kernel sequences,
// outputs), whose names every operator uses as its own. Operators live in varex::operators, above the
// harness: the harness includes nothing of theirs and finds them through the registry the binary installs.
#include "harness/operators/operator.hpp"

namespace varex::operators {
using namespace harness;  // varex::harness
}  // namespace varex::operators
