// libFuzzer target: a user operator's declaration and its expressions (scripts/fuzz.sh builds and runs it
// with clang).
#include "tests/fuzz/fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  varex::fuzz::declarations(data, size);
  return 0;
}
