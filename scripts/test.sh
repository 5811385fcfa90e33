#!/usr/bin/env bash
# Sets up, builds and runs every test: a release build with warnings as errors of the two binaries and the
# CUDA toolchain's tests (NVRTC compiles the kernel variants, the CUB library loads: not varex's memory, and
# minutes under the sanitizers); and a build under AddressSanitizer and UndefinedBehaviorSanitizer (warnings
# as errors too) that compiles and runs all the others, the operator contract among them. Also checks the
# formatting. From a clean clone with cold caches (PoCL compiles every program a test runs) it took 32 to 42
# minutes before issue 29, and 28 min at 4ab77ca (unity builds: both builds 6.5 min; release tests 121 s;
# sanitizer tests 1,157 s, 600 s of them with warm caches), 25 min at 738407d (PoCL's loops method below:
# sanitizer tests 997 s), 21 min on CI at f948be2; PoCL without its optimisations below took the sanitizer
# tests from 1,307 s to 786 s here, and the whole command to 21 min 41 s here at 52084d8 and 21 min 52 s
# at 736e48f (release tests 175 s, sanitizer tests 696 s); CI took 1,287 s at 560dbba. At fd32ba1 it took
# 36 min 30 s here (release tests 140 s, the NVRTC test pairwise past 48 programs; sanitizer tests 1,303 s;
# the two builds about 12.5 min against about 7 before, on the same commands: this machine ran slower that day).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
in_release='^(Cuda/CudaCompile\..*|Vendor\..*)$'

# The vendor library for one architecture only: its tests here check that it builds and loads (its calls
# need a GPU), and each architecture is a minute of nvcc's time. scripts/carry.sh builds all of them.
# Only the CUDA toolchain's test binary and the two product binaries at -O2: the suite itself is compiled
# once, in the sanitizer build below (it was compiled in both: two minutes of the builds' eight here).
scripts/setup.sh --target varex --target varex-bench --target varex_cuda_tests build -DVAREX_WERROR=ON \
  -DVAREX_VENDOR=ON -DVAREX_VENDOR_ARCHS=90
scripts/format.sh --check
ctest --test-dir build -j "$jobs" --output-on-failure -R "$in_release"

# -O1 with line tables: a third faster to build than -O2 -g, and the stack traces still name the lines.
# The CUB vendor library is nvcc's work, not varex's memory: the release build builds it and runs its tests.
scripts/setup.sh build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DVAREX_SANITIZE=ON -DVAREX_WERROR=ON -DVAREX_VENDOR=OFF
# PoCL and the OpenCL loader keep allocations until exit; leaks are not what this build looks for.
# The tests check results, not speed: an 8 MiB last-level cache keeps every cache flush and bandwidth probe
# small where a VM reports its host's (a 2-core VM reported 260 MiB, and each repetition's flush wrote 520 MiB).
# A declared cache also sizes the probe as is (a reported one is read as at least 256 MiB): the probe every
# fresh database runs took 12 s of PoCL's unoptimised copies here at 256 MiB, and 0.6 s at 16 MiB.
export VAREX_LLC_BYTES=$((8 << 20))
# PoCL's work-group functions by loops, not its default vectorising method: the kernels are the same and
# verified the same, but each compiles in a quarter less time (67 s against 50 s for a test that builds
# 12 programs from cold caches), and from cold caches the suite spends half its time in PoCL's compiler.
export POCL_WORK_GROUP_METHOD=loops
# And without PoCL's optimisations (-cl-opt-disable on every build): the same kernels, verified the same, but
# built four times faster (a test of 12 programs from cold caches: 70 s against 17 s) and run slower; the
# sanitizer tests took 1,307 s with them and 786 s without (92d3986, 2 cores). The optimised code of every
# kernel class is verified on the GPU machine (docs/RESULTS.md), where the speed is measured.
export POCL_EXTRA_BUILD_FLAGS=-cl-opt-disable
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -j "$jobs" --output-on-failure -E '^(Cuda/CudaCompile\..*|Vendor\..*)$'
