// libFuzzer target: the input loaders (scripts/fuzz.sh builds and runs it with clang).
#include "tests/fuzz/fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  varex::fuzz::loaders(data, size);
  return 0;
}
