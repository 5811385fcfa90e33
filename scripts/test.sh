#!/usr/bin/env bash
# Sets up, builds and runs every test twice: a release build with warnings as errors, and a build under
# AddressSanitizer and UndefinedBehaviorSanitizer. Also checks the formatting.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"

scripts/setup.sh build -DVAREX_WERROR=ON
scripts/format.sh --check
ctest --test-dir build -j "$jobs" --output-on-failure

# -O1 with line tables: a third faster to build than -O2 -g, and the stack traces still name the lines.
scripts/setup.sh build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DVAREX_SANITIZE=ON -DVAREX_WERROR=ON
# PoCL and the OpenCL loader keep allocations until exit; leaks are not what this build looks for. The NVRTC
# compile test runs in the release build only: it exercises NVRTC on every kernel, not varex's memory.
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -j "$jobs" --output-on-failure -E '^Cuda\.EveryCompileVariant'
