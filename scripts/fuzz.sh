#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer and UBSan on, coverage-guided) and runs each on
# a seed corpus: the pattern compiler (checked against RE2 where both accept a pattern), the input loaders
# (columns, relations, record files, strings) and the plan loader (seeded with the shipped plans).
# Usage: scripts/fuzz.sh [RUNS [WORKERS]]
#   RUNS: executions per target (default 10000000; 0 = a quick 100000), split over WORKERS processes per
#   target (default 1; the GPU machine's 16 cores take 5 per target).
#   FUZZ_SANITIZERS=address,undefined (the default) or undefined: AddressSanitizer costs the pattern target
#   about ten times its speed.
#   FUZZ_BUILT=1 runs the targets already in build-fuzz (on a machine without clang: build them here, carry
#   build-fuzz/fuzz_* and this script).
# The targets run at the same time; libFuzzer's reports end up in build-fuzz/*.log (fuzz-N.log per worker).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10000000}"
workers="${2:-1}"
[ "$runs" = 0 ] && runs=100000
targets=(patterns loaders plans)
if [ "${FUZZ_BUILT:-0}" != 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (Debian: clang, libclang-rt-14-dev)" >&2; exit 2; }
  sanitizers="${FUZZ_SANITIZERS:-address,undefined}"
  cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVAREX_FUZZ=ON -DVAREX_BUILD_TESTS=OFF -DVAREX_WITH_CUDA=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,$sanitizers -fno-sanitize-recover=undefined" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitizers" >/dev/null
  cmake --build build-fuzz --target "${targets[@]/#/fuzz_}" -j "$(nproc)"
fi
for target in "${targets[@]}"; do
  rm -rf "build-fuzz/corpus-$target" "build-fuzz/run-$target"
  mkdir -p "build-fuzz/corpus-$target" "build-fuzz/run-$target"
done
cp plans/*.json build-fuzz/corpus-plans/
for p in 'quasi(periodic|crystal)' '^a[[:digit:]]{2,5}$' '%green\_%' 'a|b*c+' '[^x-z]\.\d\w\s' '\x41{0,3}?'; do
  printf '%s' "$p" > "build-fuzz/corpus-patterns/$(printf '%s' "$p" | md5sum | cut -c1-12)"
done
printf '1\n-2\n2147483647\n' > build-fuzz/corpus-loaders/ints
printf '1,2\n3,4\r\n' > build-fuzz/corpus-loaders/pairs
printf 'green\n\nred\xff\n' > build-fuzz/corpus-loaders/strings
for target in "${targets[@]}"; do
  max_len=256
  [ "$target" = plans ] && max_len=8192  # a shipped plan is 1 to 3 kB
  # Each worker runs its share with its own seed; the workers share the growing corpus directory.
  for ((w = 0; w < workers; ++w)); do
    ASAN_OPTIONS=detect_leaks=0 "build-fuzz/fuzz_$target" -runs="$(((runs + workers - 1) / workers))" \
      -seed="$((w + 1))" -max_len="$max_len" -print_final_stats=1 -reload=1 \
      -artifact_prefix="build-fuzz/run-$target/" \
      "build-fuzz/corpus-$target" > "build-fuzz/run-$target/fuzz-$w.log" 2>&1 &
  done
done
wait
status=0
for target in "${targets[@]}"; do
  total=0
  for log in "build-fuzz/run-$target"/fuzz-*.log; do
    if grep -qE "^==[0-9]+== ?ERROR|^SUMMARY:|deadly signal" "$log"; then
      grep -E "ERROR|SUMMARY|Test unit written" "$log" | sed "s/^/$target: /"
      status=1
    fi
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    [ -n "$n" ] || { echo "fuzz: $target failed ($log)" >&2; status=1; continue; }
    total=$((total + n))
  done
  echo "$target: $total executions over $workers worker(s), corpus $(ls "build-fuzz/corpus-$target" | wc -l) inputs"
done
exit "$status"
