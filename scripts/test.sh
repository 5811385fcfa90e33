#!/usr/bin/env bash
# Sets up, builds and runs every test: a release build (warnings as errors) of the libraries and the CUDA
# toolchain's tests (NVRTC compiles the kernel variants, the CUB library loads: not varex's memory, and
# minutes under the sanitizers); and a build under AddressSanitizer and UndefinedBehaviorSanitizer (warnings
# as errors too) that compiles and runs all the others, the operator contract among them. Also checks the
# formatting. From a clean clone with cold caches (build folders, PoCL's and varex's compile caches) `.ci/run`
# took 1,232 s here at 539fdb5: the release build 179 s and its tests 85 s, the sanitizer build 405 s and its
# tests 563 s, three at a time (CI took 1,184 s at 52a96b4). Both cores are busy throughout: the sanitizer
# tests used 1,118 s of CPU in 624 s (at 0748e08, each test timed by time(1), three at a time). The slowest then: the
# installed-package consumer (62 s of CPU), the hash join's device tests (29 to 32 s each), the selection's
# whole-space sweep and the strategy replays (21 to 26 s each). The CUDA tests stay in the release build:
# under the sanitizers NVRTC took 4 to 5 times as long (the hash join's compile test 111 s against 27 s, even
# without allocation stacks or quarantine), more than building the libraries a second time costs. Earlier
# figures are in the history of this file.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
# The CUDA toolchain's tests (tests/test_cuda.cpp, test_vendor.cpp), which only the release build compiles.
in_release='^(Cuda[./].*|Vendor\..*)$'

# The vendor library for one architecture only: its tests here check that it builds and loads (its calls
# need a GPU), and each architecture is a minute of nvcc's time. scripts/carry.sh builds all of them.
# Only the CUDA toolchain's tests (and the libraries they link, at -O2 with warnings as errors): the suite and
# the product binaries it runs are compiled once, in the sanitizer build below.
scripts/setup.sh --target varex_cuda_tests build -DVAREX_WERROR=ON -DVAREX_VENDOR=ON -DVAREX_VENDOR_ARCHS=90
scripts/format.sh --check
ctest --test-dir build -j "$jobs" --output-on-failure -O build/ctest.log -R "$in_release"

# -O1 with line tables: a third faster to build than -O2 -g, and the stack traces still name the lines.
# The CUB vendor library is nvcc's work, not varex's memory: the release build builds it and runs its tests.
# Without UBSan's vptr, null and object-size checks (CMakeLists.txt says why). Not -O0 for the test sources:
# their copies of the inline functions they share with the library (containers, JSON) are the ones linked,
# and the tuner's replay tests took 2.5 times as long.
scripts/setup.sh build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DVAREX_SANITIZE=ON -DVAREX_UBSAN_EXCLUDE=vptr,null,object-size -DVAREX_WERROR=ON -DVAREX_VENDOR=OFF
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
# And one work-group function per kernel, not one more for each local size a test launches with: PoCL
# compiles each specialisation apart (4,120 of them for 259 programs in a cold run of the suite), and the
# generic function runs every local size the same. Two device tests from cold caches: 70 s against 44 s.
export POCL_WORK_GROUP_SPECIALIZATION=0
# The fleet tests (tests/test_fleet.cpp) submit to a one-node Slurm on this machine: started here where the
# tests run as root (it installs slurm-wlm and munge where missing); elsewhere they skip, or fail where
# VAREX_REQUIRE_SLURM is set, as CI sets it.
if [ "$(id -u)" -eq 0 ]; then
  scripts/slurm_local.sh start >/dev/null
fi
# Every test's output is kept in build-sanitize/ctest.log (and build/ctest.log), a failed one's printed too.
# One test more than cores: the fleet tests wait on Slurm's jobs, and others on processes they stop or time
# out, holding a slot without using its core (CI took 1,373 s at 1885472 with one test per core).
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize -j "$((jobs + 1))" --output-on-failure -O build-sanitize/ctest.log
