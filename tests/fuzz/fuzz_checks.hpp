#pragma once
// What the fuzzers check, shared by the libFuzzer targets (scripts/fuzz.sh, clang) and the bounded random
// driver in the test suite (tests/test_fuzz.cpp, run under AddressSanitizer and UBSan in CI): any input is
// either refused with a UsageError or processed into something that keeps its invariants; nothing crashes,
// hangs or reads out of bounds.
#include <cstddef>
#include <cstdint>

namespace varex::fuzz {

// The pattern compiler: the input as a POSIX regular expression and as a LIKE pattern, each compiled to its
// minimal automaton (at most 4096 states) and run over a few strings made from the input.
void patterns(const std::uint8_t* data, std::size_t size);

// The input loaders: the input as a text and as a binary int32 column, as key,value rows, as a relation
// (key,value[,value...]), as a record file (a0,a1,...) and as a string column.
void loaders(const std::uint8_t* data, std::size_t size);

// The plan loader: the input as a plan file's JSON, parsed into a plan whose steps and outputs refer only
// to steps before them.
void plans(const std::uint8_t* data, std::size_t size);

// A user operator's declaration: the input as an operator.json (its kernel file there), read into a
// declaration whose expressions each evaluate to a value or a UsageError at the tunables' defaults; and the
// input as one expression, parsed and evaluated.
void declarations(const std::uint8_t* data, std::size_t size);

}  // namespace varex::fuzz
