#!/usr/bin/env bash
# Sets up, builds and runs every test twice: a release build with warnings as errors, and a build under
# AddressSanitizer and UndefinedBehaviorSanitizer. Also checks the formatting.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"

scripts/setup.sh build -DVAREX_WERROR=ON
scripts/format.sh --check
ctest --test-dir build -j "$jobs" --output-on-failure

scripts/setup.sh build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVAREX_SANITIZE=ON -DVAREX_WERROR=ON
# PoCL and the OpenCL loader keep allocations until exit; leaks are not what this build looks for.
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -j "$jobs" --output-on-failure
