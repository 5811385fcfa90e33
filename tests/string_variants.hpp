#pragma once
// The string operators' test operands and variants, shared by their tests (test_strings.cpp,
// test_bound_strings.cpp).
#include <map>
#include <string>
#include <vector>

#include "operators/strings/string_reference.hpp"

namespace varex::test {

// One operand per string operator, the shape the tests check them on.
struct StringCase {
  operators::StringOp op;
  std::string operand;
};

inline const std::vector<StringCase> kStringCases{
    {operators::StringOp::Equal, "MEDIUM LASERED TIN"},
    {operators::StringOp::Prefix, "MEDIUM LASERED"},
    {operators::StringOp::Like, "%LASERED_TIN%"},
    {operators::StringOp::Regex, "LASER(ED|ING) [A-Z]+$|\xc3\xa9"},
};

// One covering set of fully pinned variants that every string test runs, so that a test finds the programs
// an earlier one compiled (PoCL and varex keep them across the tests of a run): six programs per operator
// instead of the cross product. Between them every value of every tunable on the CPU device: both kernels,
// threshold 25/50/75/90, unroll 1/2/3/4/8, load 1/4, local auto/32/64/128, grid cover/1/4/16/64, both
// layouts; the refill kernel with each layout x load, the naive kernel with both layouts and both loads.
// `layout` is dropped for the operators without an automaton (string equality and prefix).
inline const std::vector<std::map<std::string, std::string>> kStringVariants{
    {{"kernel", "naive"},
     {"threshold", "50"},
     {"unroll", "1"},
     {"load", "1"},
     {"layout", "flat"},
     {"local", "auto"},
     {"grid", "cover"}},
    {{"kernel", "naive"},
     {"threshold", "50"},
     {"unroll", "3"},
     {"load", "4"},
     {"layout", "table"},
     {"local", "64"},
     {"grid", "16"}},
    {{"kernel", "refill"},
     {"threshold", "25"},
     {"unroll", "4"},
     {"load", "1"},
     {"layout", "table"},
     {"local", "32"},
     {"grid", "1"}},
    {{"kernel", "refill"},
     {"threshold", "90"},
     {"unroll", "8"},
     {"load", "4"},
     {"layout", "flat"},
     {"local", "128"},
     {"grid", "4"}},
    {{"kernel", "refill"},
     {"threshold", "75"},
     {"unroll", "2"},
     {"load", "4"},
     {"layout", "table"},
     {"local", "64"},
     {"grid", "64"}},
    {{"kernel", "refill"},
     {"threshold", "50"},
     {"unroll", "1"},
     {"load", "1"},
     {"layout", "flat"},
     {"local", "32"},
     {"grid", "4"}},
};

}  // namespace varex::test
