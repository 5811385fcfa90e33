#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (AddressSanitizer and UBSan on, coverage-guided) and runs each on
# a seed corpus: the pattern compiler (checked against RE2 where both accept a pattern), the input loaders
# (columns, relations, record files, strings) and the plan loader (seeded with the shipped plans).
# Usage: scripts/fuzz.sh [RUNS]   (default 10000000 executions per target; 0 = a quick 100000)
#   FUZZ_SANITIZERS=address,undefined (the default) or undefined: AddressSanitizer costs the pattern target
#   about ten times its speed (some 100 executions a second here), so the ten-million run takes UBSan alone.
# The targets run at the same time, one core each; libFuzzer's reports end up in build-fuzz/*.log.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10000000}"
[ "$runs" = 0 ] && runs=100000
command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (Debian: clang, libclang-rt-14-dev)" >&2; exit 2; }
sanitizers="${FUZZ_SANITIZERS:-address,undefined}"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DVAREX_FUZZ=ON -DVAREX_BUILD_TESTS=OFF -DVAREX_WITH_CUDA=OFF \
  "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,$sanitizers -fno-sanitize-recover=undefined" \
  "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitizers" >/dev/null
cmake --build build-fuzz --target fuzz_patterns fuzz_loaders fuzz_plans -j "$(nproc)"
mkdir -p build-fuzz/corpus-patterns build-fuzz/corpus-loaders build-fuzz/corpus-plans
cp plans/*.json build-fuzz/corpus-plans/
for p in 'quasi(periodic|crystal)' '^a[[:digit:]]{2,5}$' '%green\_%' 'a|b*c+' '[^x-z]\.\d\w\s' '\x41{0,3}?'; do
  printf '%s' "$p" > "build-fuzz/corpus-patterns/$(printf '%s' "$p" | md5sum | cut -c1-12)"
done
printf '1\n-2\n2147483647\n' > build-fuzz/corpus-loaders/ints
printf '1,2\n3,4\r\n' > build-fuzz/corpus-loaders/pairs
printf 'green\n\nred\xff\n' > build-fuzz/corpus-loaders/strings
for target in patterns loaders plans; do
  max_len=256
  [ "$target" = plans ] && max_len=8192  # a shipped plan is 1 to 3 kB
  ASAN_OPTIONS=detect_leaks=0 "build-fuzz/fuzz_$target" -runs="$runs" -max_len="$max_len" -print_final_stats=1 \
    "build-fuzz/corpus-$target" > "build-fuzz/fuzz_$target.log" 2>&1 &
done
wait
for target in patterns loaders plans; do
  grep -E "^#[0-9]+.*DONE|stat::number_of_executed_units|ERROR|fuzz:" "build-fuzz/fuzz_$target.log" | sed "s/^/$target: /"
  grep -q "stat::number_of_executed_units" "build-fuzz/fuzz_$target.log" || { echo "fuzz: $target failed" >&2; exit 1; }
done
