#pragma once
// Hands every operator of this build to the harness (harness/operators/registry.hpp). Each binary calls it
// first thing; calling it again does nothing. Generated: build/generated/operator_registry.cpp.
namespace varex::operators {

void install();

}  // namespace varex::operators
