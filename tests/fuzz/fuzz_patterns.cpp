// libFuzzer target: the pattern compiler (scripts/fuzz.sh builds and runs it with clang).
#include "tests/fuzz/fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  varex::fuzz::patterns(data, size);
  return 0;
}
