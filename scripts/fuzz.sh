#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (coverage-guided, AddressSanitizer and UBSan on) and runs each on
# a seed corpus: the pattern compiler (checked against RE2 where both accept a pattern), the input loaders
# (columns, relations, record files, strings), the plan loader (seeded with the shipped plans) and user operators'
# declarations (seeded with the examples' operator.json).
# Usage: scripts/fuzz.sh [RUNS [WORKERS]]
#   RUNS: executions per target (default 10000000; 0 = a quick 100000), split over WORKERS processes per
#   target (default 1), which share the growing corpus.
#   FUZZ_SANITIZERS=address,undefined (the default) or undefined: AddressSanitizer costs the pattern target
#   about fifty times its speed (260 executions a second against 12,000-17,000 for the loaders here).
#   FUZZ_TARGETS="patterns loaders plans declarations" (the default) or some of them.
#   FUZZ_DIR=build-fuzz (the default): the build directory, one per set of sanitizers.
#   FUZZ_BUILT=1 runs the targets already in FUZZ_DIR (on a machine without clang: build them here and
#   carry FUZZ_DIR/fuzz_* with the source tree).
#   FUZZ_SECONDS caps each worker's time (libFuzzer's -max_total_time), so that its counts are printed
#   within a lent machine's limit; the summary says how many executions ran.
# libFuzzer's reports end up in FUZZ_DIR/run-TARGET/fuzz-N.log, a crashing input beside them.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10000000}"
workers="${2:-1}"
[ "$runs" = 0 ] && runs=100000
read -r -a targets <<< "${FUZZ_TARGETS:-patterns loaders plans declarations}"
dir="${FUZZ_DIR:-build-fuzz}"
limit=()
[ -n "${FUZZ_SECONDS:-}" ] && limit=(-max_total_time="$FUZZ_SECONDS")
if [ "${FUZZ_BUILT:-0}" != 1 ]; then
  command -v clang++ >/dev/null || { echo "fuzz: clang++ is needed (Debian: clang, libclang-rt-14-dev)" >&2; exit 2; }
  sanitizers="${FUZZ_SANITIZERS:-address,undefined}"
  cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVAREX_FUZZ=ON -DVAREX_BUILD_TESTS=OFF -DVAREX_WITH_CUDA=OFF \
    "-DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link,$sanitizers -fno-sanitize-recover=undefined" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitizers" >/dev/null
  cmake --build "$dir" --target "${targets[@]/#/fuzz_}" -j "$(nproc)"
fi
for target in "${targets[@]}"; do
  rm -rf "$dir/corpus-$target" "$dir/run-$target"
  mkdir -p "$dir/corpus-$target" "$dir/run-$target"
  case "$target" in
    plans) cp plans/*.json "$dir/corpus-plans/" ;;
    declarations)  # one seed per example, named by its directory (they are all operator.json)
      for f in examples/user-operators/*/operator.json; do
        cp "$f" "$dir/corpus-declarations/$(basename "$(dirname "$f")").json"
      done ;;
    patterns)
      for p in 'quasi(periodic|crystal)' '^a[[:digit:]]{2,5}$' '%green\_%' 'a|b*c+' '[^x-z]\.\d\w\s' '\x41{0,3}?'; do
        printf '%s' "$p" > "$dir/corpus-patterns/$(printf '%s' "$p" | md5sum | cut -c1-12)"
      done ;;
    loaders)
      printf '1\n-2\n2147483647\n' > "$dir/corpus-loaders/ints"
      printf '1,2\n3,4\r\n' > "$dir/corpus-loaders/pairs"
      printf 'green\n\nred\xff\n' > "$dir/corpus-loaders/strings" ;;
  esac
done
for target in "${targets[@]}"; do
  # A shipped plan is 1 to 3 kB; a pattern longer than 64 bytes mostly buys counted repetitions that cost the
  # compiler a millisecond each (155 executions a second per core at 256 bytes, 1,000 at 64: RESULTS).
  case "$target" in plans) max_len=8192 ;; declarations) max_len=4096 ;; patterns) max_len=64 ;; *) max_len=256 ;; esac
  for ((w = 0; w < workers; ++w)); do
    ASAN_OPTIONS=detect_leaks=0 "$dir/fuzz_$target" -runs="$(((runs + workers - 1) / workers))" "${limit[@]}" \
      -seed="$((w + 1))" -max_len="$max_len" -print_final_stats=1 -reload=1 -artifact_prefix="$dir/run-$target/" \
      "$dir/corpus-$target" > "$dir/run-$target/fuzz-$w.log" 2>&1 &
  done
done
wait
status=0
for target in "${targets[@]}"; do
  total=0
  for log in "$dir/run-$target"/fuzz-*.log; do
    if grep -qE "^==[0-9]+== ?ERROR|^SUMMARY:|deadly signal" "$log"; then
      grep -E "ERROR|SUMMARY|Test unit written" "$log" | sed "s/^/$target: /"
      status=1
    fi
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    [ -n "$n" ] || { echo "fuzz: $target failed ($log)" >&2; status=1; continue; }
    total=$((total + n))
  done
  echo "$target: $total executions over $workers worker(s), corpus of $(ls "$dir/corpus-$target" | wc -l) inputs"
done
exit "$status"
