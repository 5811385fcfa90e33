#!/usr/bin/env bash
# The evidence of docs/RESULTS.md, recorded on the lent GPU machine from a build carried in .carry
# (scripts/carry.sh makes it). Each part named on the command line runs in turn against one database
# ($OUT/gpu.db); everything it writes ends up in $OUT/evidence.tar.gz.
#   env        the machine: GPU, driver, OpenCL platforms, varex's devices, copy probes
#   selection  selection sweeps of every GPU device at 2^28 rows, Fett's padding experiment, AUC-bandit
#              tuning at 10% on every device (90 s on CPU devices), the strategy benchmark
#   profiles   export (JSON, header, Kernel Tuner T4), the consumer example built there against the
#              exported header and asked for every device, varex-bench with the profile, the HTML report
#   hashcheck  every compile-time variant of the hash join and the group-by verified on the GPU devices
#              under a few launch shapes, at odd sizes with duplicates and skew ($files/hashcheck.db)
#   hashjoin   the join at 2^24 x 2^28 rows: source default and AUC-bandit tuning on the GPU devices, the
#              source's findings (grid (processors) x local size, PreprocessHT, local lookup array) at 2^22 x 2^26
#              on CUDA, default and tuning on the CPU at 2^20 x 2^24
#   strings_check  every compile-time variant of the string operators verified on the GPU devices on
#              awkward rows (empty, long, bytes >= 128) under a few launch shapes ($files/stringcheck.db)
#   strings    document 003's experiments on the GPU devices at 2^24 rows (parts strings_selectivity,
#              strings_regex, strings_tune): equality (p_type) and prefix (titles) over the selectivity,
#              naive against refill; regex prefix and unanchored search on titles, flat against table
#              layout; automaton size; AUC-bandit tuning of regex at 1% and the CPU baseline
#   strings_cpu  the same on the CPU devices at 2^22 rows
#   dogqc32_check  issue 32: every LIKE-by-segments variant verified on awkward rows under awkward patterns
#   dogqc32_like  document 003's figs. 11.1, 11.3, 11.4: LIKE by segments against LIKE's automaton (flat,
#              table), the prefix test and the regex over the selectivity (a series, 1% to 64%) on titles,
#              naive and refill, the prefix pattern and the unanchored one
#   dogqc32_grid  figs. 9.1 and 10.2: the naive equality on p_type at 0.25% over local size x grid; the prefix
#              test on p_type over the selectivity, naive and refill by 1, 2 and 3 bytes per check
#              (scripts/strings_summary.py and `varex report` over the returned databases draw them)
#   strings_profile  Nsight Compute counters of naive and refill kernels (regex at 8%, CUDA)
#   strings_refill  regex (prefix, unanchored) at 1% and 8%: naive against refill over all of refill's knobs
#   multigpu   a machine with several GPUs: their identities, then `tune --device gpu --budget 60` (the
#              default workload) with one worker per GPU at the same time against the same tuning one
#              device after the other (fresh databases and compile caches; twice, alternating; then once
#              each at --budget 10%), and each GPU's best variant measured again on its twin
#   sanitizer  compute-sanitizer over one verified run of every CUDA compile-time variant class of every
#              operator at small, awkward sizes: memcheck everywhere, racecheck where kernels share memory
#              (hash family, string refill); loop-count tunables (unroll, batch) at two values each;
#              SANITIZE_ONLY (a regular expression over the labels) picks some
#   duckdb_hash  the hash join (2^22 x 2^24) and the group-by (2^24 rows, 16 and 2^20 groups) tuned on PoCL
#              against DuckDB on the same 16 cores (bench/duckdb_hash.py; carry .whl with its wheel)
#   groupby    the group-by at 2^28 rows with 16 and 2^20 groups: default and tuning on the GPU devices,
#              the tuned variant over 1 to 2^24 groups, Fett's padding experiment at 11,999,989 rows on
#              every device, default and tuning on the CPU at 2^24 rows
#   fleet33    issue 33: a sweep (FLEET_SWEEP, default selection at 2^24 rows on cuda:0) in two shards on two GPUs,
#              the fleet's task scripts run by hand, merged, against the same sweep on one GPU (FLEET_NAME names
#              the files; wall times in fleet33_wall.txt)
#   energy34   issue 34: on cuda:0, selection 2^28, the join 2^24 x 2^28, the group-by 2^28 (2^20 groups) and
#              ra_sort 2^26 (key, value) (ENERGY_OPS picks some) each tuned ENERGY_BUDGET (default 90s) by energy
#              and again by time with energy measured, into one database per operator; the fastest, the most
#              frugal and the edp best of both, and the Pareto front of time against energy
#              (scripts/energy_summary.py)
#   energy34_noise  after energy34: the fastest and the most frugal variant of each of NOISE_OPS (default
#              ra_sort) measured five times each by `varex run --energy-ms 100` (a fresh process each)
#   runtime30  issue 30: the runtime library on the application's own cuMemAlloc buffers
#              (.carry/bin/runtime_cuda_timing, built against the installed package) against `varex run` of
#              the same variant: selection 2^28, join 2^24 x 2^28, group-by 2^28 rows / 2^20 groups, ra_sort
#              2^26 (key, value), each tuned RUNTIME_BUDGET (default 30s) on cuda:0 and exported as the profile
#              the runtime reads
#   runtime30_adapt  issue 30: 1,000 calls of the join (2^22 x 2^24) through the runtime library with online
#              adaptation and no profile (at most 10% exploring), against a RUNTIME_BUDGET tune of the same
#              workload; the settled and the tuned variant measured again by `varex run` on the library's data;
#              ADAPT_STRATEGIES names the runtime's strategies to try (default: local)
#   transfers  the source's transfer experiment (document 002, sec. 4.2): host-device copies of 2^16 to 2^28
#              bytes from pinned and pageable memory on every device (varex-bench --varex-transfers), and
#              kernel, upload and download times of ra_project, ra_select and ra_join at 2^20 to 2^26 tuples
#   duckdb     the Red Fox primitives on PoCL against DuckDB (bench/duckdb_redfox.py; carry .whl with its wheel)
#   vendor     every vendor variant (impl=cub) of every operator once on cuda:0, verified (2^22 rows; relations
#              also with 3 values; ra_sort also by key), then a sweep of ra_intersect (its vendor variant spoiled
#              the context on CUDA 13.0) and one of selection with a variant made to write through an invalid
#              address: every other variant measured. The check that catches the next toolkit; keep it.
#   govindaraju_goals  issue 15's goals at 2^28 records of 4 uniform attributes: cnf_filter (60%), range (20th-80th
#              percentile), semilinear, the direct SUM and kth_largest (median) tuned on cuda:0 and ocl:1:0 with the
#              copy probe; the CNF of four clauses fused against clause by clause; each tuned variant again with
#              the CPU baseline on the 16 host cores
#   govindaraju_bitmap  cnf_filter and range at 2^28 records into a bitmap (the goals part may pick the count)
#   govindaraju_paper  document 004's experiments (sec. 5.5-5.10) on cuda:0, ocl:1:0 and PoCL: 1 M TCP/IP-trace
#              records and 360 K census records, the kernel, upload and CPU baseline of each; k-th largest over
#              k, the median over n and at 80% selectivity; the bit-counting SUM against the direct one
#   plans17    issue 17's plans (A to E) at PLAN_SFS (default 1 10) on PLAN_DEVICES (default cuda:0 ocl:1:0):
#              step by step and fused at the defaults, each with resident data and transferred through pinned
#              and pageable memory (one sweep per plan), then tuned with resident data for PLAN_BUDGET
#              (default 20s) and the tuned variant transferred; scripts/plan_summary.py prints the table
#   plans17_sweep  the first sweep of plans17 alone (defaults; no tune)
#   tune27     issue 27's evidence: a TUNE_BUDGET (default 60s) tune from an empty database, no warm start, of
#              the join 2^24 x 2^28 (unique keys), the group-by at 2^28 rows with 16 and 2^20 groups, ra_sort 2^26
#              (key, value), regex on 2^24 titles at 1% and plan D at SF 10 (resident) on each of TUNE_DEVICES
#              (default cuda:0 ocl:1:0); TUNE_WORKLOADS picks some (join g16 g20 sort regex planD); prints
#              budget, evaluations, cut-offs, spent and the tuned best
#   sweep27    the recorded hard sweep of ../shared/sweeps/ (regex on 2^22 titles at 1%, every variant, 3 to 10
#              repetitions) again on each of SWEEP_DEVICES (default cuda:0) into $files/sweep27.db, for the
#              warm-start replay (`varex tuner-bench --warm-start` over it and the H200's)
#   plans17_memory  each plan of PLANS at PLAN_SFS on PLAN_DEVICES (default cuda:0) transferred through
#              pinned, pageable and mapped (zero-copy) memory, step by step and fused, at the defaults
#   plans17_standalone  each plan of PLANS (default A C D E) at PLAN_SFS on PLAN_DEVICES tuned as a whole
#              (PLAN_BUDGET, default 60s) against the composition of its steps' stand-alone bests
#              (scripts/plan_standalone.py)
#   duckdb_plans  the plans in DuckDB on the same data and all host cores at PLAN_SFS, results checked against
#              varex's reference (bench/duckdb_plans.py; carry .whl with its wheel)
#   dogqc32_states  fig. 11.5 on TPC-H's p_name (pname): a search for two colours (about 11 % of the rows) and
#              the same with 2, 6 and 14 words that no name holds, to grow the automaton; naive and refill,
#              flat and table
#   redfox32   issue 32: Red Fox's figs. 9-14 and appendices A and B: each primitive's source default over its
#              input relation from 1 KiB to 128 MiB (2^7 to 2^24 tuples of key and value, a series; PRODUCT
#              2^5 to 2^12 tuples and twice that on the right, with the CPU baseline) on each of
#              REDFOX_DEVICES (default cuda:0 ocl:1:0; ocl:0:0 is the CPU), kernel and transfers; then
#              CUB and Thrust (impl=cub) of REDFOX_VENDOR_OPS (default: all that have them; empty: none) on cuda:0
#   fett32     issue 32: Fett's tables 3.8-3.10 on the group-by (2^16 groups) on every device: 12,000,000 rows
#              at local 128 against 11,999,999 at the driver's local size; 11,999,989 rows (a prime) without
#              padding, padded by the host and guarded at local 128, each kernel's time (kernels.csv)
#   user51     issue 51, third part: a user's CUDA C++ kernel (examples/user-operators/sum_cuda, warp shuffles)
#              swept on cuda:0 at 2^26 rows beside reduce_sum's OpenCL C over the portable header, and offered
#              `--device gpu` (its OpenCL devices left out); the float stencil (diffusion, 4096 x 4096) swept on
#              cuda:0 and ocl:1:0, each verified against its C reference in a shared library (built here
#              into .carry/refs by scripts/carry.sh); my_group_by (groupby's contract) at 2^26 rows of 2^16
#              keys on both: the user's variants swept, then a USER_BUDGET (default 30s) tune of both sides
#   gov32_count  issue 32: Govindaraju's sec. 5.11 on 1 M records of 4 uniform attributes: the COUNT of the
#              filters of 5.5-5.7 by `varex run` (kernel, download) on each device against the filter's
#              bitmap, and through the runtime library on the application's CUDA buffers, timed on the host
#              until the count is in hand (.carry/bin/runtime_cuda_timing --op count)
set -uo pipefail
cd "$(dirname "$0")/.."
carry=$PWD/.carry
out=${OUT:-/tmp/varex-evidence}
mkdir -p "$out/files"
files=$out/files
db=$files/gpu.db
export VAREX_CACHE_DIR=/tmp/varex-cache
[ -r /usr/share/dict/words ] || export VAREX_WORD_LIST=$carry/words
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# A machine whose OpenCL loader has no vendor files still has NVIDIA's OpenCL library in the driver.
if ! ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1; then
  mkdir -p /tmp/ocl-vendors
  nv=$(ldconfig -p | awk '/libnvidia-opencl.so.1/{print $NF; exit}')
  [ -z "$nv" ] && nv=$(find /usr/local/nvidia /usr/lib -name 'libnvidia-opencl.so.1' 2>/dev/null | head -1)
  [ -n "$nv" ] && echo "$nv" > /tmp/ocl-vendors/nvidia.icd && export OCL_ICD_VENDORS=/tmp/ocl-vendors
fi
varex() { "$carry/bin/varex" "$@"; }
step() { echo "== $* ($(date +%T))"; }
vendor_show="import json,sys; m=json.load(sys.stdin); m=m[0] if isinstance(m,list) else m; print(m.get('params',{}).get('impl'), round(m.get('kernel_ms') or 0,4), 'ms', 'verified' if m.get('verified') else 'FAILED: '+str(m.get('status'))+' '+str(m.get('error') or m.get('mismatch')))"

part_env() {
  step env
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  lscpu | grep -E 'Model name|^CPU\(s\)'
  ls /etc/OpenCL/vendors 2>&1
  echo "OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-}"
  varex devices
  varex devices --json > "$files/devices.json"
  varex probe --device all --db "$db"
}

part_selection() {
  step selection sweeps
  varex sweep --op selection --device gpu --rows 2^28 --db "$db" --json > "$files/selection_sweeps.json"
  step padding experiment
  for rows in 16000008 11999989; do
    for d in $(varex devices --json | python3 -c "import json,sys; print(' '.join(d['id'] for d in json.load(sys.stdin)))"); do
      varex run --op selection --device "$d" --rows "$rows" --db "$db" --set ept=8 --set kernel=loop \
        --set local=auto --set padding=none --json
      varex run --op selection --device "$d" --rows "$rows" --db "$db" --set ept=8 --set kernel=overflow \
        --set local=128 --set padding=guard --json
    done
  done > "$files/padding.json"
  step tuning
  varex tune --op selection --device gpu --rows 2^28 --db "$db" --strategy auc_bandit --budget 10% \
    --json > "$files/selection_tune_gpu.json"
  varex tune --op selection --device cpu --rows 2^28 --db "$db" --strategy auc_bandit --budget 90s --min-reps 3 \
    --json > "$files/selection_tune_cpu.json"
  step tuner-bench
  varex tuner-bench --db "$db" --op selection --seeds 25 --csv "$files/tuner_bench.csv"
  varex best --db "$db"
}

part_profiles() {
  step export
  varex export --db "$db" --format json --out "$files/profile.json"
  varex export --db "$db" --format header --out "$files/tuned_profile.hpp"
  varex export --db "$db" --format kt-t4 --out "$files/kt-t4"
  step consumer example
  cmake -S examples/profile-consumer -B /tmp/consumer -DCMAKE_PREFIX_PATH="$carry/prefix" \
    -DVAREX_PROFILE_HEADER="$files/tuned_profile.hpp" > /tmp/consumer-configure.log &&
    cmake --build /tmp/consumer > /tmp/consumer-build.log || cat /tmp/consumer-*.log
  python3 - "$files/devices.json" > "$files/consumer.txt" <<'PY'
import json, subprocess, sys
for d in json.load(open(sys.argv[1])):
    print(f"== {d['id']} {d['name']}", flush=True)
    subprocess.run(["/tmp/consumer/profile_consumer", "--profile", sys.argv[1].replace("devices.json", "profile.json"),
                    "--backend", d["backend"], "--vendor", d["vendor"], "--name", d["name"], "--arch", d["arch"],
                    "--type", d["type"], "--rows", "268435456"], check=False)
PY
  cat "$files/consumer.txt"
  step varex-bench
  "$carry/bin/varex-bench" --varex-device=all --varex-rows=2^28 --varex-profile="$files/profile.json" \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out="$files/varex_bench.json" \
    --benchmark_out_format=json
  step report
  python3 -c 'import matplotlib' 2>/dev/null && export VAREX_PYTHON=python3
  varex report --db "$db" --out "$files/report"
}

# `--set` arguments of the best verified variant of OP on DEVICE for workloads whose parameters include
# the given key=value pairs: best_sets OP DEVICE key=value...
best_sets() {
  varex best --db "$db" --op "$1" --json | python3 -c '
import json, sys
device, want = sys.argv[1], dict(a.split("=") for a in sys.argv[2:])
for b in json.load(sys.stdin):
    p = b["workload"]["params"]
    if b["device"] == device and all(str(p.get(k)) == v for k, v in want.items()):
        print(" ".join(f"--set {k}={v}" for k, v in b["params"].items()))
        break' "${@:2}"
}

part_hashcheck() {
  step hash correctness
  local check=$files/hashcheck.db
  varex sweep --op hashjoin --device gpu --rows 100003 --rows2 400009 --distinct 30011 --match-ratio 0.7 \
    --zipf 0.8 --set local=auto,256 --set grid=cover,128wg --set load=50 --warmup 0 --min-reps 1 \
    --max-reps 1 --db "$check" --json > "$files/hashcheck_join.json"
  varex sweep --op groupby --device gpu --rows 1000003 --distinct 5003 --zipf 0.5 --set local=auto,128 \
    --set grid=cover,512wg --set load=50 --warmup 0 --min-reps 1 --max-reps 1 --db "$check" \
    --json > "$files/hashcheck_groupby.json"
  python3 - "$files"/hashcheck_*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    for s in json.load(open(f)):
        print(f, s["device"], "evaluated", s["evaluations"], "ok", s["ok"], "failed", s["failed"])
PY
}

part_hashjoin() {
  local goal=(--rows 2^24 --rows2 2^28) small=(--rows 2^22 --rows2 2^26) reps=(--min-reps 3 --max-reps 10)
  step hashjoin tuning at the goal size
  # 16 and 32 work-groups (the source's values for small GPUs) leave an H200 idle: the findings below
  # measure them; the tuner skips them at this size.
  varex tune --op hashjoin --device gpu "${goal[@]}" --db "$db" --strategy auc_bandit --budget 45s "${reps[@]}" \
    --set grid=cover,512wg,2048wg,8192wg \
    --json > "$files/join_tune_gpu.json"
  step hashjoin source default at the goal size
  for d in cuda:0 ocl:1:0; do varex run --op hashjoin --device "$d" "${goal[@]}" --db "$db" --json; done \
    > "$files/join_default_gpu.json"
  step "hashjoin findings on cuda:0: grid (processors) x local size, then PreprocessHT and the local lookup array"
  local fixed=(--set hash=mult --set probing=double --set load=50 --set padding=guard)
  varex sweep --op hashjoin --device cuda:0 "${small[@]}" --db "$db" "${fixed[@]}" --set grid=16wg,32wg,cover \
    --set local=32,64,128,256 --set preprocess=off --set batch=1 --set lookup=private "${reps[@]}" \
    --json > "$files/join_findings_grid.json"
  varex sweep --op hashjoin --device cuda:0 "${small[@]}" --db "$db" "${fixed[@]}" --set grid=cover \
    --set local=256 --set preprocess=off,on --set batch=8 --set lookup=private,local "${reps[@]}" \
    --json > "$files/join_findings_caching.json"
  step hashjoin on the CPU
  local cpu=(--rows 2^20 --rows2 2^24)
  varex run --op hashjoin --device cpu "${cpu[@]}" --db "$db" --json > "$files/join_default_cpu.json"
  varex tune --op hashjoin --device cpu "${cpu[@]}" --db "$db" --strategy auc_bandit --budget 40s "${reps[@]}" \
    --json > "$files/join_tune_cpu.json"
  varex best --db "$db" --op hashjoin
}

part_groupby() {
  local reps=(--min-reps 3 --max-reps 10)
  for groups in 16 2^20; do
    step "groupby tuning, $groups groups"
    varex tune --op groupby --device gpu --rows 2^28 --distinct "$groups" --db "$db" --strategy auc_bandit \
      --budget 40s "${reps[@]}" --set grid=cover,512wg,2048wg,8192wg --json > "$files/groupby_tune_gpu_$groups.json"
    for d in cuda:0 ocl:1:0; do varex run --op groupby --device "$d" --rows 2^28 --distinct "$groups" --db "$db" --json; done \
      > "$files/groupby_default_gpu_$groups.json"
  done
  step groupby scaling over the groups with the variant tuned for 2^20 groups
  # shellcheck disable=SC2046
  for groups in 1 2^10 2^16 2^24; do
    varex run --op groupby --device cuda:0 --rows 2^26 --distinct "$groups" --db "$db" \
      $(best_sets groupby cuda:0 rows=268435456 distinct=1048576) --json
  done > "$files/groupby_scaling_cuda.json"
  step "Fett's padding experiment (11,999,989 rows)"
  varex sweep --op groupby --device all --rows 11999989 --distinct 2^16 --db "$db" --set padding=none,host,guard \
    --set local=auto,128 "${reps[@]}" --json > "$files/groupby_padding.json"
  step groupby on the CPU
  varex run --op groupby --device cpu --rows 2^24 --distinct 16 --db "$db" --json > "$files/groupby_default_cpu.json"
  varex tune --op groupby --device cpu --rows 2^24 --distinct 16 --db "$db" --strategy auc_bandit --budget 40s \
    "${reps[@]}" --json > "$files/groupby_tune_cpu.json"
  varex best --db "$db" --op groupby
}

# The string parts read STRING_DEVICES (default gpu), STRING_ROWS (default 2^24) and STRING_SHAPES (the
# launch shapes of the sweeps); strings_cpu runs them all on the CPU devices at 2^22 rows.
string_sweep() {
  # shellcheck disable=SC2086
  varex sweep --device "${STRING_DEVICES:-gpu}" --rows "${STRING_ROWS:-2^24}" --db "$db" \
    ${STRING_SHAPES:---set grid=cover,16 --set local=auto,256} --set threshold=50 --set unroll=2 \
    --set buffer=shared --min-reps 3 --max-reps 10 --json "$@"
}

part_strings_check() {
  step "strings: every compile-time variant verified on awkward rows"
  local check=$files/stringcheck.db awkward=$files/awkward.txt
  python3 - "$awkward" <<'PY'
import random, sys
random.seed(7)
words = ["quasiperiodic", "semiperiodic", "tiling", "tilings", "lattice", "of", "the", "plane", "a"]
rows = []
for i in range(30011):
    r = random.random()
    if r < 0.05: rows.append(b"")
    elif r < 0.25: rows.append(b" ".join(random.choice(words).encode() for _ in range(random.randint(1, 8))))
    elif r < 0.30: rows.append(bytes(random.choice(range(128, 256)) for _ in range(random.randint(1, 40))) + b" quasiperiodic tiling")
    elif r < 0.31: rows.append(b"x" * random.randint(1000, 5000) + b"semiperiodic lattices")
    else: rows.append(bytes(random.choice(b"abcdefghijklmnopqrstuvwxyz ") for _ in range(random.randint(1, 90))))
open(sys.argv[1], "wb").write(b"\n".join(rows) + b"\n")
PY
  local shapes=(--set local=64,1024 --set grid=cover,4 --warmup 0 --min-reps 1 --max-reps 1 --db "$check")
  {
    varex sweep --op str_equal --device "${STRING_DEVICES:-gpu}" --input "$awkward" --query "value=a quasiperiodic tiling" "${shapes[@]}" --json
    varex sweep --op str_prefix --device "${STRING_DEVICES:-gpu}" --input "$awkward" --query "prefix=semiperiodic" "${shapes[@]}" --json
    varex sweep --op str_like --device "${STRING_DEVICES:-gpu}" --input "$awkward" --query 'pattern=%periodic _iling%' "${shapes[@]}" --json
    varex sweep --op regex --device "${STRING_DEVICES:-gpu}" --input "$awkward" --query 'pattern=(quasi|semi)periodic (tiling|lattice)s?$' \
      "${shapes[@]}" --json
  } > "$files/stringcheck.json"
  python3 - "$check" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for row in db.execute("select v.op, d.name, m.status, count(*) from measurements m join variants v on v.id = m.variant_id "
                      "join devices d on d.id = m.device_id group by 1, 2, 3"):
    print("stringcheck", *row)
for row in db.execute("select v.op, v.backend, m.status, m.error from measurements m join variants v on v.id = m.variant_id "
                      "where m.status != 'ok' limit 10"):
    print("  failed:", *row)
PY
}

part_strings_selectivity() {
  step "strings: equality (p_type) and prefix (titles) over the selectivity, naive against refill"
  for sel in 0.001 0.01 0.04 0.16 0.64; do
    string_sweep --op str_equal --strings ptype --selectivity "$sel" --set kernel=naive,refill
    string_sweep --op str_prefix --strings titles --selectivity "$sel" --set kernel=naive,refill
  done >> "$files/strings_selectivity.json"
}

part_strings_regex() {
  step "strings: regex prefix and unanchored search over the selectivity, flat against table"
  for pattern in '^a quasiperiodic tiling' 'quasiperiodic tiling'; do
    for sel in 0.01 0.08 0.64; do
      string_sweep --op regex --selectivity "$sel" --query "pattern=$pattern" --set kernel=naive,refill \
        --set layout=flat,table
    done
  done >> "$files/strings_regex.json"
  step "strings: automaton size at 1%"
  for pattern in '(quasi|semi)periodic (tiling|lattice)s?' \
    '(quasi|semi|a)periodic (tiling|lattice|packing)s? of the (plane|sphere)' 'quasi[a-z ]{0,12}tiling'; do
    string_sweep --op regex --selectivity 0.01 --query "pattern=$pattern" --set kernel=naive,refill \
      --set layout=flat,table
  done >> "$files/strings_automaton.json"
  for pattern in '^a quasiperiodic tiling' 'quasiperiodic tiling' '(quasi|semi)periodic (tiling|lattice)s?' \
    '(quasi|semi|a)periodic (tiling|lattice|packing)s? of the (plane|sphere)' 'quasi[a-z ]{0,12}tiling'; do
    varex run --op regex --device cpu --rows 1024 --query "pattern=$pattern" --db "$files/plans.db" \
      --no-baseline --json | python3 -c 'import json,sys; j=json.load(sys.stdin); print(json.dumps([j["workload"]["query"], j["query_plan"]]))'
  done > "$files/strings_plans.json"
}

part_dogqc32_check() {
  step "LIKE by segments: every compile-time variant verified on awkward rows and patterns"
  local check=$files/like32check.db lines=$files/like32.txt
  python3 - "$lines" <<'PY'
import random, sys
random.seed(32)
rows = []
for i in range(30011):
    r = random.random()
    if r < 0.05: rows.append(b"")
    elif r < 0.10: rows.append(b"x" * random.randint(1000, 5000) + b"semiperiodic lattice")
    elif r < 0.15: rows.append(bytes(random.choice(range(128, 256)) for _ in range(random.randint(1, 40))) + b" a quasiperiodic tiling")
    elif r < 0.30: rows.append(b"a quasiperiodic tiling of the plane"[: random.randint(0, 35)])
    else: rows.append(bytes(random.choice(b"abcdefghijklmnopqrstuvwxyz %_") for _ in range(random.randint(1, 90))))
open(sys.argv[1], "wb").write(b"\n".join(rows) + b"\n")
PY
  for pattern in '%' '' 'a quasi%' '%lattice' '%periodic _iling%' '_%_' '%a%e%i%o%' 'a quasiperiodic tiling of the plane%' \
    '%\%%' '%\_\_%'; do
    varex sweep --op str_like --device "${STRING_DEVICES:-gpu}" --input "$lines" --query "pattern=$pattern" \
      --set algorithm=segments --set local=64,1024 --set grid=cover,4 --warmup 0 --min-reps 1 --max-reps 1 \
      --db "$check" --json
  done > "$files/like32check.json"
  python3 -c 'import sqlite3, sys; [print("like32check", *r) for r in sqlite3.connect(sys.argv[1]).execute(
    "select status, count(*) from measurements group by 1")]' "$check"
}

part_dogqc32_like() {
  step "LIKE by segments against the automaton, the prefix test and the regex over the selectivity (titles)"
  local sel=0.01..0.64
  {
    string_sweep --op str_like --strings titles --selectivity "$sel" --set kernel=naive,refill \
      --set algorithm=automaton,segments --set layout=flat,table
    string_sweep --op str_like --strings titles --selectivity "$sel" --query 'pattern=%a quasiperiodic tiling%' \
      --set kernel=naive,refill --set algorithm=automaton,segments --set layout=flat,table
    string_sweep --op str_prefix --strings titles --selectivity "$sel" --set kernel=naive,refill
    string_sweep --op regex --strings titles --selectivity "$sel" --set kernel=naive,refill --set layout=flat,table
    string_sweep --op regex --strings titles --selectivity "$sel" --query 'pattern=a quasiperiodic tiling' \
      --set kernel=naive,refill --set layout=flat,table
  } > "$files/like32.json"
}

part_dogqc32_grid() {
  step "fig. 9.1: the naive equality on p_type at 0.25% over local size x grid"
  varex sweep --device "${STRING_DEVICES:-gpu}" --rows "${STRING_ROWS:-2^24}" --db "$db" --op str_equal \
    --strings ptype --selectivity 0.0025 --set kernel=naive --set unroll=1 --set load=1 --min-reps 3 \
    --max-reps 10 --json > "$files/fig91.json"
  step "fig. 10.2: the prefix test on p_type over the selectivity, naive and refill by 1, 2, 3 bytes a check"
  varex sweep --device "${STRING_DEVICES:-gpu}" --rows "${STRING_ROWS:-2^24}" --db "$db" --op str_prefix \
    --strings ptype --selectivity 0.0025,0.01..0.64 --set kernel=naive,refill --set unroll=1,2,3 \
    --set grid=cover,16 --set local=auto,256 --set load=1 --set threshold=50 --set buffer=shared \
    --min-reps 3 --max-reps 10 --json > "$files/fig102.json"
}

part_dogqc32_states() {
  step "fig. 11.5: automaton size on pname"
  local extra=(zebra quartz jasper onyx umber sepia ochre teal amber ruby jade scarlet crimson cobalt) n words
  for n in 0 2 6 14; do
    words=(green blue "${extra[@]:0:n}")
    words=$(IFS='|' && echo "${words[*]}")
    string_sweep --op regex --strings pname --query "pattern=($words)" --set kernel=naive,refill \
      --set layout=flat,table
  done > "$files/fig115.json"
}

part_strings_tune() {
  local rows=${STRING_ROWS:-2^24}
  step "strings: tuning regex at 1% (titles, unanchored) with the CPU baseline"
  varex tune --op regex --device "${STRING_DEVICES:-gpu}" --rows "$rows" --selectivity 0.01 \
    --query 'pattern=quasiperiodic tiling' --db "$db" --strategy auc_bandit --budget "${STRING_BUDGET:-40s}" \
    --min-reps 3 --max-reps 10 --json > "$files/strings_tune_${STRING_DEVICES:-gpu}.json"
  # The tuned variant of each device once more, with the CPU baseline timed in the same run.
  python3 -c '
import json, sys
for s in json.load(open(sys.argv[1])):
    if "best" in s:
        print(s["device"], " ".join(f"--set {k}={v}" for k, v in s["best"]["params"].items()))' \
    "$files/strings_tune_${STRING_DEVICES:-gpu}.json" | while read -r d sets; do
    # shellcheck disable=SC2086
    varex run --op regex --device "$d" --rows "$rows" --selectivity 0.01 --query 'pattern=quasiperiodic tiling' \
      --db "$db" $sets --json
  done >> "$files/strings_baseline_${STRING_DEVICES:-gpu}.json"
}

part_strings_refill() {
  step "strings: naive against refill over refill's knobs, regex at 1% and 8% (flat)"
  for pattern in '^a quasiperiodic tiling' 'quasiperiodic tiling'; do
    for sel in 0.01 0.08; do
      varex sweep --op regex --device "${STRING_DEVICES:-gpu}" --rows "${STRING_ROWS:-2^24}" --selectivity "$sel" \
        --query "pattern=$pattern" --db "$db" --set layout=flat --set kernel=naive,refill \
        --set threshold=25,50,75,90 --set unroll=1,2,4,8 --set grid=cover,4,16 --set local=auto,256,1024 \
        --min-reps 3 --max-reps 10 --json
    done
  done > "$files/strings_refill_${STRING_DEVICES:-gpu}.json"
}

# Hardware counters of the naive kernel and of lane refill (the tuned and the pinned variant) through
# Nsight Compute, to see where refill's time goes: warp efficiency, instructions, issue and occupancy.
part_strings_profile() {
  step "strings: Nsight Compute on naive and refill"
  local ncu metrics
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  [ -z "$ncu" ] && { echo "no ncu on this machine"; return; }
  metrics=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio
  metrics+=,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
  metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  metrics+=,l1tex__t_sector_hit_rate.pct,dram__bytes_read.sum,l1tex__throughput.avg.pct_of_peak_sustained_active
  metrics+=,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
  metrics+=,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio
  metrics+=,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio
  local naive="--set kernel=naive --set grid=cover --set local=128 --set unroll=2"
  local tuned="--set kernel=refill --set grid=4 --set local=1024 --set threshold=90 --set unroll=8"
  local pinned="--set kernel=refill --set grid=16 --set local=256 --set threshold=50 --set unroll=2"
  for pattern in 'quasiperiodic tiling' '^a quasiperiodic tiling'; do
    for sets in "$naive" "$tuned" "$pinned"; do
      echo "### $pattern | $sets"
      # shellcheck disable=SC2086
      "$ncu" --clock-control none --target-processes all --kernel-name strings_select --launch-count 1 \
        --metrics "$metrics" "$carry/bin/varex" run --op regex --device cuda:0 --rows 2^24 --selectivity 0.08 \
        --query "pattern=$pattern" --set layout=flat --set load=1 --set buffer=shared $sets --no-baseline \
        --min-reps 1 --max-reps 1 --db "$files/profile.db" 2>&1 | grep -E "^ +[a-z_]+__|kernel  |rows  "
    done
  done | tee "$files/strings_profile.txt"
}

part_multigpu() {
  step multigpu
  varex devices
  varex devices --json > "$files/devices.json"
  # Twice each, alternating, with cold compile caches (varex's and the driver's) for every run, so that
  # neither mode profits from the other's compilations.
  local mode round budget
  for round in 1 2 3; do
    budget=60
    [ "$round" = 3 ] && budget=10%  # a tuning budget as people use it
    for mode in sequential parallel; do
      local name=multigpu_${mode}_$round
      local mdb=$files/$name.db
      rm -rf "$mdb"* "/tmp/varex-cache-$name"
      varex probe --device gpu --db "$mdb" > /dev/null  # probes stay out of the timed tuning
      local flag=""
      [ "$mode" = sequential ] && flag=--sequential
      local start end
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      CUDA_CACHE_DISABLE=1 VAREX_CACHE_DIR=/tmp/varex-cache-$name varex tune --op selection --device gpu \
        --budget "$budget" --db "$mdb" $flag --json > "$files/$name.json"
      end=$(date +%s.%N)
      echo "$mode $round budget $budget wall_s $(python3 -c "print(round($end - $start, 2))")" | tee -a "$files/multigpu_wall.txt"
    done
  done
  cp "$files/multigpu_parallel_1.json" "$files/multigpu_parallel.json"
  cp "$files/multigpu_parallel_1.db" "$files/multigpu_parallel.db"
  # Each GPU's declared best, measured again on the other GPU of the same backend.
  python3 - "$files/multigpu_parallel.json" <<'PY' > "$files/multigpu_cross.txt"
import json, sys
runs = {r["device"]: r for r in json.load(open(sys.argv[1]))}
pairs = [("cuda:0", "cuda:1"), ("ocl:1:0", "ocl:1:1")]
for a, b in pairs:
    for src, dst in ((a, b), (b, a)):
        if src in runs and dst in runs and "best" in runs[src]:
            sets = " ".join(f"--set {k}={v}" for k, v in runs[src]["best"]["params"].items())
            print(f"{src} {dst} {sets}")
PY
  while read -r src dst sets; do
    # shellcheck disable=SC2086
    echo "$src-best-on-$dst $(varex run --op selection --device "$dst" $sets --db "$files/multigpu_cross.db" \
      --json | python3 -c "import json,sys; m=json.load(sys.stdin); print(m['kernel_ms'], m['kernel_ci'], m['verified'])")"
  done < "$files/multigpu_cross.txt" | tee "$files/multigpu_cross_results.txt"
  varex best --db "$files/multigpu_parallel.db"
}

part_sanitizer() {
  step sanitizer
  local cs=/usr/local/cuda/bin/compute-sanitizer
  [ -x "$cs" ] || cs=$(command -v compute-sanitizer)
  "$cs" --version | head -2
  # The control: a planted out-of-bounds write in a child process of the traced one is found, so "0 errors"
  # below speaks for varex's worker processes too.
  printf '__global__ void k(int* p) { p[threadIdx.x + 64] = 1; }\nint main() { int* p; cudaMalloc(&p, 64 * 4); k<<<1, 32>>>(p); cudaDeviceSynchronize(); return 0; }\n' > /tmp/oob.cu
  nvcc -o /tmp/oob /tmp/oob.cu 2>&1 | tail -2
  "$cs" --tool memcheck --target-processes all --error-exitcode 99 bash -c /tmp/oob > "$files/sanitizer_control.txt" 2>&1
  echo "control (planted out-of-bounds write in a child process): exit $? $(grep -c 'Invalid __global__ write' "$files/sanitizer_control.txt") invalid writes reported" | tee "$files/sanitizer.txt"
  local sdb=$files/sanitizer.db
  # label ; operator ; workload ; pins: every compile-time tunable free but the loop counts, launch shape fixed
  local runs=(
    "selection;selection;--rows 30011;--set padding=guard --set local=128 --set grid=cover"
    "hashjoin;hashjoin;--rows 3001 --rows2 12007 --distinct 1500;--set local=128 --set grid=cover --set padding=guard --set load=50 --set batch=1,4"
    "hashjoin-unique;hashjoin;--rows 3001 --rows2 12007;--set local=128 --set grid=32wg --set padding=none --set hash=mult --set probing=double --set load=50 --set plan=unique,partitioned --set batch=1,4 --set append=group,item"
    "hashjoin-duplicates;hashjoin;--rows 3001 --rows2 12007 --distinct 700 --zipf 1;--set local=128 --set grid=32wg --set padding=none --set hash=mult --set probing=double --set load=50 --set plan=unique,partitioned --set batch=4 --set radix_bits=6,13"
    "groupby-issue16;groupby;--rows 20011 --distinct 1500 --zipf 1;--set local=128 --set grid=32wg --set padding=guard --set load=50 --set build=pessimistic --set sizing=sketch --set agg=registers,warp,partitioned --set extents=build --set hash=mult --set probing=linear"
    "groupby-optimistic-sketch;groupby;--rows 20011 --distinct 257;--set local=128 --set grid=cover --set padding=guard --set load=50 --set build=optimistic --set sizing=sketch"
    "groupby-pessimistic-zipf;groupby;--rows 20011 --distinct 257 --zipf 1;--set local=128 --set grid=32wg --set padding=guard --set load=50 --set build=pessimistic --set sizing=rows"
    "str_equal;str_equal;--rows 4099 --selectivity 0.1;--set local=128 --set grid=4 --set unroll=1,3 --set threshold=50"
    "str_prefix;str_prefix;--rows 4099 --selectivity 0.1;--set local=128 --set grid=4 --set unroll=1,3 --set threshold=50"
    "str_like;str_like;--rows 4099 --selectivity 0.1;--set local=128 --set grid=4 --set unroll=1,3 --set threshold=50"
    "regex;regex;--rows 4099 --selectivity 0.1 --query pattern=quasi(periodic|crystal);--set local=128 --set grid=4 --set unroll=1,3 --set threshold=50"
    "ra_product-w2;ra_product;--rows 37 --rows2 1001 --values 1;--set local=128 --set grid=cover"
    "ra_product-w4;ra_product;--rows 37 --rows2 1001 --values 3;--set local=64 --set grid=cover"
    "range-ballot;range;--rows 30011 --attributes 2;--set pack=ballot,local --set local=128 --set output=bitmap --set grid=cover"
    "ra_select-ballot;ra_select;--rows 30011 --values 1 --selectivity 0.5;--set impl=own --set algorithm=single_pass_ballot --set local=128 --set grid=cover,2"
    "ra_intersect-w2;ra_intersect;--rows 5003 --rows2 4001 --values 1 --distinct 300;--set impl=own --set local=128 --set grid=cover"
    "ra_union-w4;ra_union;--rows 3001 --rows2 2003 --values 3 --distinct 5;--set impl=own --set local=64 --set grid=cover"
    "ra_sort-radix;ra_sort;--rows 30011 --values 2 --keys dup;--set impl=own --set algorithm=radix --set local=256 --set ept=4,8 --set grid=cover --set skip=on"
    "partition-buffered;groupby;--rows 20011 --distinct 1500 --zipf 1;--set local=128 --set grid=32wg --set padding=guard --set load=50 --set build=pessimistic --set sizing=sketch --set agg=partitioned --set extents=build --set hash=mult --set probing=linear --set scatter=buffered --set passes=2,3"
    "join-buffered;hashjoin;--rows 3001 --rows2 12007 --distinct 700 --zipf 1;--set local=256 --set grid=32wg --set padding=none --set hash=mult --set probing=double --set load=50 --set plan=partitioned --set batch=1 --set radix_bits=6,13,16 --set scatter=buffered"
    "ra_sort-onesweep;ra_sort;--rows 30011 --values 2 --keys dup;--set impl=own --set algorithm=onesweep --set local=256 --set ept=4,16 --set grid=cover --set skip=on"
  )
  local tool line label op workload pins
  for tool in memcheck racecheck; do
    for line in "${runs[@]}"; do
      IFS=';' read -r label op workload pins <<<"$line"
      [[ "$label" =~ ${SANITIZE_ONLY:-.} ]] || continue
      [ "$tool" = racecheck ] && [ "$op" = selection ] && continue  # CUDA selection shares no memory
      local base=$files/sanitizer_${tool}_$label
      # shellcheck disable=SC2086
      "$cs" --tool "$tool" --target-processes all --error-exitcode 99 --print-limit 10 --log-file "$base.log" \
        "$carry/bin/varex" sweep --op "$op" --device cuda:0 $workload $pins --db "$sdb" --warmup 0 \
        --min-reps 1 --max-reps 1 --remeasure 1 --timeout 600 --fresh --quiet --json > "$base.json" 2> "$base.err"
      local rc=$?
      echo "$tool $label: exit $rc, $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; print(r['evaluations'], 'of', r['valid_variants'], 'variants, ok', r['ok'], 'failed', r['failed'])" "$base.json"); $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$base.log" | tr '\n' ' ')"
    done
  done | tee -a "$files/sanitizer.txt"
}

part_vendor() {
  step every vendor variant on cuda:0
  # Each operator's vendor variant (impl=cub) once, verified in full: at 2^22 rows (pairs 2^22 x 2^22), the
  # relations also with 3 values (CUB's and Thrust's paths for 16-byte tuples), ra_sort also by key.
  local op shape
  for op in $(varex ops --json | python3 -c "import json,sys; print(' '.join(o['name'] for o in json.load(sys.stdin)))"); do
    varex variants --op "$op" --device cuda:0 --rows 2^10 --set impl=cub >/dev/null 2>&1 || continue
    for shape in "" "--values 3" "--query by=key"; do
      [ "$shape" = "--query by=key" ] && [ "$op" != ra_sort ] && continue
      # shellcheck disable=SC2086
      if [ -n "$shape" ] && ! varex variants --op "$op" --device cuda:0 --rows 2^10 $shape --set impl=cub >/dev/null 2>&1; then
        continue
      fi
      echo -n "$op ${shape:-default}: "
      # shellcheck disable=SC2086
      varex run --op "$op" --device cuda:0 --rows 2^22 $shape --set impl=cub --db "$files/vendor.db" --quiet \
        --json 2>&1 | python3 -c "$vendor_show" || echo failed
    done
  done
  # A sweep whose vendor variant would spoil the context (it did: Thrust's set operations on CUDA 13.0 before
  # 48) and one with a variant made to write through an invalid address (a real sticky error): every other
  # variant is measured.
  step sweeps with a failing variant
  varex sweep --op ra_intersect --device cuda:0 --rows 2^22 --rows2 2^22 --db "$files/vendor.db" --quiet --json \
    > "$files/vendor_sweep_intersect.json" 2>&1
  VAREX_INJECT_FAULT='illegal_address:local=256' varex sweep --op selection --device cuda:0 --rows 2^24 \
    --set kernel=overflow --set ept=8 --db "$files/vendor.db" --quiet --json > "$files/vendor_sweep_fault.json" 2>&1
  python3 - "$files/vendor.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for sid, op, status in db.execute("SELECT s.id, s.op, s.status FROM sessions s WHERE s.kind = 'sweep'"):
    rows = dict(db.execute("SELECT status, COUNT(*) FROM measurements WHERE session_id = ? GROUP BY status", (sid,)).fetchall())
    errors = [e for (e,) in db.execute("SELECT DISTINCT error FROM measurements WHERE session_id = ? AND status != 'ok'", (sid,))]
    print(f"sweep {op}: {status}, {rows}, errors: {errors}")
PY
}

part_duckdb() {
  step PoCL against DuckDB
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "no DuckDB wheel"; return; }
  PYTHONPATH=/tmp/site python3 bench/duckdb_redfox.py --varex "$(command -v varex)" --rows "${DUCKDB_ROWS:-4194304}" \
    --budget "${DUCKDB_BUDGET:-15s}" --ops "${DUCKDB_OPS:-ra_select,ra_reduce,ra_product,ra_sort}" | tee "$files/duckdb.jsonl"
}

# The hash join and the group-by on PoCL against DuckDB on the same cores (bench/duckdb_hash.py).
part_duckdb_hash() {
  step "PoCL against DuckDB: hash join and group-by"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "no DuckDB wheel"; return; }
  PYTHONPATH=/tmp/site python3 bench/duckdb_hash.py --varex "$(command -v varex)" --build-rows 4194304 \
    --probe-rows 16777216 --group-rows 16777216 --groups 1048576 --budget "${DUCKDB_BUDGET:-40s}" \
    --workloads "${DUCKDB_WORKLOADS:-join,groupby}" --join-set plan=unique --join-set append=item \
    | tee "$files/duckdb_hash.jsonl"
}

part_transfers() {
  step transfers: pinned and pageable
  "$carry/bin/varex-bench" --varex-transfers=2^16,2^20,2^24,2^26,2^28 --benchmark_filter='^transfer/' \
    --benchmark_min_time=0.2 --benchmark_format=json --benchmark_out="$files/transfers.json" \
    --benchmark_out_format=json > "$files/transfers.txt" 2>&1 || echo "varex-bench failed"
  python3 -c "
import json
for b in json.load(open('$files/transfers.json'))['benchmarks']:
    print(b['name'], round(b['real_time'], 2), 'us', round(b.get('GB/s', 0), 2), 'GB/s')"
  local d rows op
  local show="import json,sys; m=json.load(sys.stdin); print(m['op'], m['device'], m['input_rows'], 'kernel', round(m['kernel_ms'],4), 'h2d', round(m['h2d_ms'],4), 'd2h', round(m['d2h_ms'],4), 'verified' if m['verified'] else 'WRONG')"
  for d in cuda:0 ocl:1:0 cpu; do
    for rows in 2^20 2^23 2^26; do
      for op in ra_project ra_select ra_join; do
        varex run --op $op --device "$d" --rows $rows --values 2 --min-reps 3 --max-reps 10 --db "$db" --quiet --json \
          | python3 -c "$show" || echo "$op $d $rows failed"
      done
    done
  done
}

# Govindaraju's operators (issue 15). show: one line per run.
gov_show="import json,sys
for line in sys.stdin:
    line=line.strip()
    if not line.startswith('{'): continue
    m=json.loads(line); b=m.get('baseline') or {}
    print(m['op'], m['device'], ' '.join(f'{k}={v}' for k,v in sorted(m['params'].items())), 'q', json.dumps(m['workload']['query']),
          'rows_in', m['input_rows'], 'kernel', round(m['kernel_ms'],4), 'ms h2d', round(m['h2d_ms'],3), 'ms probe_frac', round(m['probe_fraction'],3),
          'cpu', round(b.get('ms',0),3), 'ms', b.get('threads'), 'verified' if m['verified'] else 'WRONG', m['rows'], m['checksum'])"

# Tunes `op` (its workload flags after the device) on one device, then runs the best variant again with the
# CPU baseline; prints the run.
gov_tune() {
  local d=$1 budget=$2; shift 2
  local tag; tag=$(echo "$d $*" | tr -c 'a-zA-Z0-9' '_' | cut -c1-60)_$(echo "$d $*" | md5sum | cut -c1-8)
  # stderr apart: NVIDIA's OpenCL compiler reports warnings there.
  varex tune --device "$d" "$@" --budget "$budget" --min-reps 3 --max-reps 10 --db "$db" --quiet --json \
    > "$files/gov_tune_$tag.json" 2> "$files/gov_tune_$tag.err" || { echo "tune failed: $d $*"; return; }
  local sets
  sets=$(tuned_sets "$files/gov_tune_$tag.json" "$@")
  # shellcheck disable=SC2086
  varex run --device "$d" "$@" $sets --min-reps 5 --max-reps 20 --db "$db" --quiet --json | tr -d '\n' | python3 -c "$gov_show"; echo
}

# The best variant of a `varex tune --json` file as --set flags, except the tunables the tuning was pinned to
# (the flags after the file, given again by the caller).
tuned_sets() {
  python3 -c 'import json,sys
pinned={a.split("=")[0] for a in sys.argv[2:]}
for s in json.load(open(sys.argv[1])):
    if "best" in s: print(" ".join(f"--set {k}={v}" for k, v in s["best"]["params"].items() if k not in pinned))' "$@"
}

part_govindaraju_goals() {
  step "Govindaraju goals at 2^28 records"
  local big=(--rows 2^28 --attributes 4)
  if [[ -n ${GOV_ONLY:-} ]]; then  # a second try of some goals: "aggregate kth_largest"
    for d in ${GOV_DEVICES:-cuda:0 ocl:1:0}; do
      [[ " $GOV_ONLY " == *" aggregate "* ]] && gov_tune "$d" 15s --op aggregate "${big[@]}" --query fn=sum --set method=direct
      [[ " $GOV_ONLY " == *" kth_largest "* ]] && gov_tune "$d" 20s --op kth_largest "${big[@]}" $([[ $d == cuda:* ]] && echo --set impl=own)
    done
    return
  fi
  local cnf4='where=a0 >= -429496730 and a1 >= -429496730 and a2 >= -429496730 and a3 >= -429496730'
  for d in ${GOV_DEVICES:-cuda:0 ocl:1:0}; do
    gov_tune "$d" 20s --op cnf_filter "${big[@]}"
    gov_tune "$d" 20s --op range "${big[@]}"
    gov_tune "$d" 20s --op semilinear "${big[@]}"
    gov_tune "$d" 15s --op aggregate "${big[@]}" --query fn=sum --set method=direct
    gov_tune "$d" 20s --op kth_largest "${big[@]}" $([[ $d == cuda:* ]] && echo --set impl=own)
    gov_tune "$d" 15s --op cnf_filter "${big[@]}" --query "$cnf4" --set strategy=fused
    gov_tune "$d" 20s --op cnf_filter "${big[@]}" --query "$cnf4" --set strategy=passes
  done
  [[ " ${GOV_DEVICES:-cuda:0} " == *" cuda:0 "* ]] && varex run --device cuda:0 --op kth_largest "${big[@]}" --set impl=cub --min-reps 5 --max-reps 20 --db "$db" --quiet \
    --json | tr -d '\n' | python3 -c "$gov_show"; echo
}

# The filters' goal with the paper's output, a bitmap (the goals part lets the tuner pick the count).
part_govindaraju_bitmap() {
  step "Govindaraju filters into a bitmap at 2^28 records"
  for d in ${GOV_DEVICES:-cuda:0 ocl:1:0}; do
    gov_tune "$d" 20s --op cnf_filter --rows 2^28 --attributes 4 --set output=bitmap
    gov_tune "$d" 20s --op range --rows 2^28 --attributes 4 --set output=bitmap
  done
}

part_govindaraju_paper() {
  step "Govindaraju's experiments (document 004, sec. 5.5-5.10)"
  local d r
  local t1m=(--rows 1000000 --attributes 4 --data traces) census=(--rows 360000 --attributes 4 --data census)
  local reps=(--min-reps 5 --max-reps 20 --db "$db" --quiet --json)
  for d in ${GOV_DEVICES:-cuda:0 ocl:1:0 ocl:0:0}; do
    {
      # 5.5 a predicate at 60% (uniform), 5.6 a range over the 20th-80th percentile, 5.8 semi-linear over 4
      varex run --device "$d" --op cnf_filter --rows 1000000 "${reps[@]}"
      varex run --device "$d" --op range --rows 1000000 "${reps[@]}"
      varex run --device "$d" --op semilinear --rows 1000000 "${reps[@]}"
      # 5.7 a conjunction over 1 to 4 attributes, each at 60%
      for w in 'a0 >= -429496730' 'a0 >= -429496730 and a1 >= -429496730' \
        'a0 >= -429496730 and a1 >= -429496730 and a2 >= -429496730' \
        'a0 >= -429496730 and a1 >= -429496730 and a2 >= -429496730 and a3 >= -429496730'; do
        varex run --device "$d" --op cnf_filter --rows 1000000 --query "where=$w" "${reps[@]}"
      done
      # 5.9 k-th largest of the traces' byte counts (19 bits) over k; the median over n; at 80% selectivity
      for k in 1 1000 250000 500000 1000000; do
        varex run --device "$d" --op kth_largest "${t1m[@]}" --query k=$k "${reps[@]}"
      done
      for r in 2^18 2^20 2^22 2^24; do
        varex run --device "$d" --op kth_largest --rows $r --data traces "${reps[@]}"
        varex run --device "$d" --op kth_largest --rows $r --data traces --query 'where=a1 >= 20' "${reps[@]}"
      done
      # 5.10 the accumulator: SUM by bit counting (one pass per bit) against the direct SUM
      varex run --device "$d" --op aggregate "${t1m[@]}" --query fn=sum --set method=bits --set sum_bits=1 "${reps[@]}"
      varex run --device "$d" --op aggregate "${t1m[@]}" --query fn=sum --set method=bits --set sum_bits=32 "${reps[@]}"
      varex run --device "$d" --op aggregate "${t1m[@]}" --query fn=sum --set method=direct "${reps[@]}"
      # the census shape
      varex run --device "$d" --op kth_largest "${census[@]}" --query attr=a1 "${reps[@]}"
      varex run --device "$d" --op aggregate "${census[@]}" --query fn=avg --query attr=a1 --query 'where=a0 < 40' "${reps[@]}"
      varex run --device "$d" --op cnf_filter "${census[@]}" --query 'where=(a0 < 30 or a2 >= 50) and a3 <= 3' "${reps[@]}"
    } 2> "$files/gov_paper_${d//:/_}.err" | tr -d '\n' | sed 's/}{/}\n{/g' | python3 -c "$gov_show"
    echo
  done
}

# `--set` pins holding every step tunable of plan $1 at its default (a sweep over the plan's own knobs).
plan_defaults() {
  python3 - "$1" <<'PY'
import json, sys
name = sys.argv[1]
plan = json.load(open(f"plans/{name.lower()}.json"))
for s in plan["steps"]:
    if s["op"] in ("select", "arith", "join"):
        print(f"--set {s['id']}.local=256 --set {s['id']}.ept=4", end=" ")
    if s["op"] == "join":
        print(f"--set {s['id']}.load=50", end=" ")
PY
}

# One plan's defaults step by step and fused, resident and transferred through every host memory offered
# (further arguments narrow the sweep).
plan_sweep() {
  local p=$1 d=$2 sf=$3
  shift 3
  # shellcheck disable=SC2046
  varex plan sweep "$p" --device "$d" --sf "$sf" --db "$db" --quiet --json --min-reps 5 --max-reps 30 \
    --set fuse=off,on $(plan_defaults "$p") "$@" > /dev/null || echo "sweep failed"
}

# plan_sweep over PLANS x PLAN_SFS x PLAN_DEVICES (default $2), each step labelled $1, the rest passed on.
sweep_plans() {
  local label=$1 devices=$2
  shift 2
  for sf in ${PLAN_SFS:-1 10}; do
    for p in ${PLANS:-A B C D E}; do
      for d in ${PLAN_DEVICES:-$devices}; do
        step "plan $p sf $sf on $d: $label"
        plan_sweep "$p" "$d" "$sf" "$@"
      done
    done
  done
}

# The report of the database and scripts/plan_summary.py's table of it, into $files/$1.md.
plan_tables() {
  varex report --db "$db" --out "$files/report" > /dev/null
  python3 scripts/plan_summary.py "$files/report" | tee "$files/$1.md"
}

part_plans17_sweep() {
  sweep_plans defaults "cuda:0 ocl:1:0"
  plan_tables plans17_sweep
}

part_plans17() {
  for sf in ${PLAN_SFS:-1 10}; do
    for p in ${PLANS:-A B C D E}; do
      for d in ${PLAN_DEVICES:-cuda:0 ocl:1:0}; do
        step "plan $p sf $sf on $d"
        plan_sweep "$p" "$d" "$sf"
        varex plan tune "$p" --device "$d" --sf "$sf" --db "$db" --quiet --json --budget "${PLAN_BUDGET:-20s}" \
          --set residency=resident > "$files/plan_${p}_${sf}_${d//:/_}.json" || echo "tune failed"
        best=$(python3 -c "import json,sys; b=json.load(open(sys.argv[1]))[0]['best']['params']; print(' '.join(f'--set {k}={v}' for k,v in b.items() if k not in ('residency','memory')))" \
          "$files/plan_${p}_${sf}_${d//:/_}.json")
        # shellcheck disable=SC2086
        varex plan sweep "$p" --device "$d" --sf "$sf" --db "$db" --quiet --json --min-reps 5 --max-reps 30 \
          $best --set residency=transferred --set memory=pinned,pageable > /dev/null || echo "transfer sweep failed"
      done
    done
  done
  plan_tables plans17
}

part_plans17_memory() {
  sweep_plans "pinned, pageable and mapped memory" cuda:0 \
    --set residency=transferred --set memory=pinned,pageable,mapped
  plan_tables plans17_memory
}

part_plans17_standalone() {
  for sf in ${PLAN_SFS:-1}; do
    for p in ${PLANS:-A C D E}; do
      for d in ${PLAN_DEVICES:-cuda:0 ocl:1:0}; do
        step "plan $p sf $sf on $d: tuned as a whole against the stand-alone bests"
        python3 scripts/plan_standalone.py --varex "$carry/bin/varex" --plan "$p" --sf "$sf" --device "$d" \
          --budget "${PLAN_BUDGET:-60s}" --db "$db" | tee -a "$files/plans17_standalone.jsonl"
      done
    done
  done
}

part_duckdb_plans() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "no DuckDB wheel"; return; }
  for sf in ${PLAN_SFS:-1 10}; do
    step "DuckDB plans sf $sf"
    PYTHONPATH=/tmp/site python3 bench/duckdb_plans.py --varex "$(command -v varex)" --sf "$sf" --reps 5 \
      --plans "${PLANS:-A,B,C,D,E}" --keep /tmp/plan-tables | tee -a "$files/duckdb_plans.jsonl"
    rm -rf /tmp/plan-tables
  done
}

part_tune27() {
  local budget=${TUNE_BUDGET:-60s} d w
  for d in ${TUNE_DEVICES:-cuda:0 ocl:1:0}; do
    local tdb=$files/tune27_${d//:/_}_$budget.db
    for w in ${TUNE_WORKLOADS:-join g16 g20 sort regex planD}; do
      step "tune27 $w on $d, $budget"
      local args=(--device "$d" --db "$tdb" --budget "$budget" --quiet --json)
      case $w in
        join) varex tune --op hashjoin --rows 2^24 --rows2 2^28 "${args[@]}" ;;
        g16) varex tune --op groupby --rows 2^28 --distinct 16 "${args[@]}" ;;
        g20) varex tune --op groupby --rows 2^28 --distinct 2^20 "${args[@]}" ;;
        sort) varex tune --op ra_sort --rows 2^26 --values 1 "${args[@]}" ;;
        regex) varex tune --op regex --strings titles --rows 2^24 --selectivity 0.01 \
          --query 'pattern=quasiperiodic tiling' "${args[@]}" ;;
        planD) varex plan tune D --sf 10 --set residency=resident "${args[@]}" ;;
      esac > "$files/tune27_${w}_${d//:/_}_$budget.json" 2> "$files/tune27_${w}_${d//:/_}_$budget.err" || echo "failed"
      python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; b=r.get('best',{}); print('$w', r['device'], '$budget', 'evaluations', r['evaluations'], 'cut off', r.get('cut_off'), 'failed', r['failed'], 'spent', round(r['spent_s'],1), 's best', round(b.get('kernel_ms',float('nan')),4), 'ms', ' '.join(f'{k}={v}' for k,v in sorted(b.get('params',{}).items())))" \
        "$files/tune27_${w}_${d//:/_}_$budget.json" || tail -3 "$files/tune27_${w}_${d//:/_}_$budget.err"
    done
  done
}

part_sweep27() {
  local d
  for d in ${SWEEP_DEVICES:-cuda:0}; do
    step "sweep27 regex on $d"
    varex sweep --op regex --strings titles --rows 2^22 --selectivity 0.01 --query 'pattern=quasiperiodic tiling' \
      --device "$d" --min-reps 3 --max-reps 10 --db "$files/sweep27.db" --quiet --json > "$files/sweep27_${d//:/_}.json"
    varex best --db "$files/sweep27.db" --op regex
  done
}

part_strings() { part_strings_selectivity; part_strings_regex; part_strings_tune; }

part_strings_cpu() {
  STRING_DEVICES=cpu STRING_ROWS=2^22 STRING_SHAPES="--set grid=cover,16 --set local=auto,64" \
    STRING_BUDGET=60s part_strings
}

# Issue 29's A/B: the Red Fox SELECT family before and after its kernels were composed from
# kernels/common/tile_select.h, the best variants of RESULTS pinned, the two builds alternating three times on
# each device (the old build carried as bin/varex-old). Prints "op workload device build ms" lines.
part_runtime30() {
  local budget=${RUNTIME_BUDGET:-30s} profile=$files/runtime30.json
  local -a workloads=("selection --rows 268435456" "hashjoin --rows 16777216 --rows2 268435456"
                      "groupby --rows 268435456 --distinct 1048576" "ra_sort --rows 67108864")
  export VAREX_VENDOR_LIBRARY=$carry/lib/libvarex_cub.so
  for w in "${workloads[@]}"; do
    step "tune $w"
    # shellcheck disable=SC2086
    varex tune --op $w --device cuda:0 --budget "$budget" --db "$files/runtime30.db" --quiet --json \
      > "$files/runtime30_tune_${w%% *}.json"
  done
  varex export --db "$files/runtime30.db" --format json --out "$profile"
  for w in "${workloads[@]}"; do
    local op=${w%% *} flags=${w#* }
    step "runtime $op"
    # shellcheck disable=SC2086
    "$carry/bin/runtime_cuda_timing" --op $w --calls 11 --profile "$profile" --dump /tmp \
      > "$files/runtime30_lib_$op.json"
    # The join on the very data the library ran on (its keys' order decides the table's collisions).
    [ "$op" = hashjoin ] && flags="--input /tmp/build.bin --input2 /tmp/probe.bin"
    local sets
    sets=$(python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print(' '.join('--set %s=%s' % kv for kv in sorted(m['params'].items())))" "$files/runtime30_lib_$op.json")
    # shellcheck disable=SC2086
    varex run --op $op --device cuda:0 $flags $sets --json > "$files/runtime30_run_$op.json"
  done
  python3 - "$files" <<'PY' | tee "$files/runtime30.txt"
import json, sys
d = sys.argv[1]
print("| operator | variant | level | runtime median ms (10 calls) | varex run ms | runtime / run |")
print("| --- | --- | --- | --- | --- | --- |")
for op in ["selection", "hashjoin", "groupby", "ra_sort"]:
    lib = json.load(open(f"{d}/runtime30_lib_{op}.json"))
    run = json.load(open(f"{d}/runtime30_run_{op}.json"))
    ok = "" if run.get("verified") else " (varex run NOT verified)"
    print(f"| {op} | {lib['variant']} | {lib['level']} | {lib['median_ms']:.4f} | {run['kernel_ms']:.4f}{ok} | {lib['median_ms'] / run['kernel_ms']:.3f} |")
PY
}

part_runtime30_adapt() {
  local adb=$files/runtime30_adapt.db sizes="--rows 4194304 --rows2 16777216" strategy
  export VAREX_VENDOR_LIBRARY=$carry/lib/libvarex_cub.so
  step "tune the join 2^22 x 2^24"
  # shellcheck disable=SC2086
  varex tune --op hashjoin $sizes --device cuda:0 --budget "${RUNTIME_BUDGET:-30s}" --db "$adb" --quiet --json \
    > "$files/runtime30_adapt_tune.json"
  local to_sets="import json,sys; print(' '.join('--set %s=%s' % kv for kv in sorted(json.load(sys.stdin).items())))"
  local tuned settled
  tuned=$(varex best --db "$adb" --json | python3 -c "import json,sys; json.dump({k: str(v) for k, v in json.load(sys.stdin)[0]['params'].items()}, sys.stdout)" | python3 -c "$to_sets")
  # The runtime's strategies (Options::adapt_strategy): ADAPT_STRATEGIES, "local" (the default) unless given.
  for strategy in ${ADAPT_STRATEGIES:-local}; do
    step "1,000 adaptive calls without a profile ($strategy)"
    # shellcheck disable=SC2086
    "$carry/bin/runtime_cuda_timing" --op hashjoin $sizes --calls 1000 --adapt 0.1 --adapt-strategy "$strategy" \
      --dump /tmp > "$files/runtime30_adapt_lib_$strategy.json"
    settled=$(python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1]))['adaptation']['settled_params'], sys.stdout)" "$files/runtime30_adapt_lib_$strategy.json" | python3 -c "$to_sets")
    # shellcheck disable=SC2086
    varex run --op hashjoin --device cuda:0 --input /tmp/build.bin --input2 /tmp/probe.bin $settled --json \
      > "$files/runtime30_adapt_run_settled_$strategy.json"
  done
  step "the tuned variant on the library's data"
  # shellcheck disable=SC2086
  varex run --op hashjoin --device cuda:0 --input /tmp/build.bin --input2 /tmp/probe.bin $tuned --json \
    > "$files/runtime30_adapt_run_tuned.json"
  python3 - "$files" ${ADAPT_STRATEGIES:-local} <<'PY' | tee "$files/runtime30_adapt.txt"
import json, sys
d = sys.argv[1]
tuned = json.load(open(f"{d}/runtime30_adapt_run_tuned.json"))
print(f"tuned (varex tune {tuned['params']}): {tuned['kernel_ms']:.4f} ms by varex run")
for strategy in sys.argv[2:]:
    a = json.load(open(f"{d}/runtime30_adapt_lib_{strategy}.json"))["adaptation"]
    settled = json.load(open(f"{d}/runtime30_adapt_run_settled_{strategy}.json"))
    print(f"{strategy}: calls {a['calls']}, exploring {a['exploring_calls']} ({100 * a['exploring_calls'] / a['calls']:.1f}%), "
          f"candidates {a['candidates']} (verified {a['verified']}, rejected {a['rejected']})")
    print(f"  settled {a['settled_variant']} {a['settled_params']}: {a['settled_ms']:.4f} ms in the library, "
          f"{settled['kernel_ms']:.4f} ms by varex run")
    print(f"  1,000 calls: {a['total_ms']:.1f} ms of device time against {a['calls'] * tuned['kernel_ms']:.1f} ms at the "
          f"tuned variant's time ({a['total_ms'] / (a['calls'] * tuned['kernel_ms']):.3f}); regret {a['regret_ms']:.1f} ms, "
          f"exploring {a['exploring_ms']:.1f} ms")
PY
}

part_user51() {
  local d udb=$files/user51.db ops=/tmp/varex-user-operators
  rm -rf "$ops" && cp -r examples/user-operators "$ops"
  cp "$carry/refs/diffusion.so" "$ops/diffusion/reference.so"
  cp "$carry/refs/sum_cuda.so" "$ops/sum_cuda/reference.so"
  step "sum_cuda (CUDA C++) and reduce_sum (OpenCL C, portable) swept on cuda:0 at 2^26 rows"
  varex sweep --op-dir "$ops" --op sum_cuda --rows 2^26 --device cuda:0 --db "$udb" --quiet --json \
    > "$files/user51_sum_cuda_sweep.json"
  varex sweep --op-dir "$ops" --op reduce_sum --rows 2^26 --device cuda:0 --db "$udb" --quiet --json \
    > "$files/user51_reduce_sum_sweep.json"
  step "sum_cuda offered --device gpu: a 10 s tune on the CUDA devices only"
  varex tune --op-dir "$ops" --op sum_cuda --rows 2^26 --device gpu --db "$udb" --budget 10s --quiet --json \
    > "$files/user51_sum_cuda_tune_gpu.json"
  for d in ${USER_DEVICES:-cuda:0 ocl:1:0}; do
    step "diffusion (float32 stencil, 4096 x 4096) swept on $d"
    varex sweep --op-dir "$ops" --op diffusion --rows 4096 --width 4096 --device "$d" --db "$udb" --quiet --json \
      > "$files/user51_diffusion_sweep_${d//:/_}.json"
  done
  for d in ${USER_DEVICES:-cuda:0 ocl:1:0}; do
    step "my_group_by (a user's group-by with groupby's contract) on $d, 2^26 rows, 2^16 keys: the user's variants swept, then a ${USER_BUDGET:-30s} tune of both"
    varex sweep --op-dir "$ops" --op my_group_by --rows 2^26 --distinct 65536 --device "$d" --db "$udb" \
      --set origin=user --quiet --json > "$files/user51_group_by_sweep_${d//:/_}.json"
    varex tune --op-dir "$ops" --op my_group_by --rows 2^26 --distinct 65536 --device "$d" --db "${udb%.db}_tune.db" \
      --budget "${USER_BUDGET:-30s}" --quiet --json > "$files/user51_group_by_tune_${d//:/_}.json"
  done
  varex best --db "$udb" --op-dir "$ops"
  varex best --db "${udb%.db}_tune.db" --op-dir "$ops"
  python3 - "$udb" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print("status counts:", db.execute("SELECT v.op, d.backend, m.status, COUNT(*) FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN devices d ON d.id = m.device_id GROUP BY 1, 2, 3").fetchall())
for r in db.execute("""SELECT v.op, d.backend, COUNT(DISTINCT v.id), MIN(m.kernel_ms), MAX(m.gbps), MAX(m.probe_fraction)
                       FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN devices d ON d.id = m.device_id
                       WHERE m.status = 'ok' GROUP BY 1, 2 ORDER BY 1, 2"""):
    print("  op, backend, verified variants, best ms, best GB/s, of probe:", r)
PY
}

# Issue 32: the sources' experiments over their axes.
part_redfox32() {
  local d op reps=(--min-reps 3 --max-reps 10 --db "$db" --quiet --json)
  local ops=(ra_project ra_select ra_join ra_intersect ra_union ra_difference ra_unique ra_reduce ra_reduce_by_key ra_sort)
  for d in ${REDFOX_DEVICES:-cuda:0 ocl:1:0}; do
    for op in "${ops[@]}"; do
      step "$op on $d over 2^7..2^24 tuples"
      varex run --op $op --device "$d" --rows 2^7..2^24 --values 1 --no-baseline "${reps[@]}" \
        > "$files/rf32_${op}_${d//:/_}.json" 2>> "$files/rf32.err" || echo "$op $d failed"
    done
    step "ra_product on $d over 2^5..2^12 x twice that"
    varex run --op ra_product --device "$d" --rows 2^5..2^12 --values 1 "${reps[@]}" \
      > "$files/rf32_ra_product_${d//:/_}.json" 2>> "$files/rf32.err" || echo "ra_product $d failed"
  done
  # The primitives varex has a CUB or Thrust variant of (not PROJECT, nor the set operations).
  for op in ${REDFOX_VENDOR_OPS-ra_select ra_join ra_unique ra_reduce ra_reduce_by_key ra_sort}; do
    step "$op by the vendor library on cuda:0"
    varex run --op $op --device cuda:0 --rows 2^7..2^24 --values 1 --no-baseline --set impl=cub "${reps[@]}" \
      > "$files/rf32_${op}_cub.json" 2>> "$files/rf32.err" || echo "$op by the vendor library failed"
  done
}

part_fett32() {
  local d reps=(--min-reps 5 --max-reps 20 --db "$db" --quiet --json) flags=(--op groupby --distinct 2^16)
  for d in ${FETT_DEVICES:-cuda:0 ocl:1:0 ocl:0:0}; do
    step "Fett's tables 3.8-3.10 on $d (the source's defaults otherwise)"
    {
      # 3.8: 12,000,000 rows at local 128 (no surplus work-item), 11,999,999 at the driver's local size
      varex run --device "$d" "${flags[@]}" --rows 12000000 --set padding=guard --set local=128 "${reps[@]}"
      varex run --device "$d" "${flags[@]}" --rows 11999999 "${reps[@]}"
      varex run --device "$d" "${flags[@]}" --rows 11999999 --set padding=guard --set local=128 "${reps[@]}"
      # 3.9 and 3.10: a prime, unpadded, padded by the host (the kernels that index by work-item alone), guarded
      varex run --device "$d" "${flags[@]}" --rows 11999989 "${reps[@]}"
      varex run --device "$d" "${flags[@]}" --rows 11999989 --set padding=host --set local=128 "${reps[@]}"
      varex run --device "$d" "${flags[@]}" --rows 11999989 --set padding=guard --set local=128 "${reps[@]}"
    } 2>> "$files/fett32.err" | tr -d '\n' | sed 's/}{/}\n{/g' > "$files/fett32_${d//:/_}.jsonl"
  done
}

part_gov32_count() {
  local d w reps=(--min-reps 5 --max-reps 20 --db "$db" --quiet --json) records=(--rows 1000000 --attributes 4)
  # 5.5 a predicate at 60 %, 5.6 the 20th to 80th percentile, 5.7 conjunctions over 1 to 4 attributes, 60 % each
  local filters=('a0 >= -429496730' 'a0 >= -1288490189 and a0 < 1288490189'
    'a0 >= -429496730 and a1 >= -429496730'
    'a0 >= -429496730 and a1 >= -429496730 and a2 >= -429496730'
    'a0 >= -429496730 and a1 >= -429496730 and a2 >= -429496730 and a3 >= -429496730')
  for d in ${GOV_DEVICES:-cuda:0 ocl:1:0 ocl:0:0}; do
    step "sec. 5.11 on $d: COUNT against the bitmap of each filter"
    for w in "${filters[@]}"; do
      varex run --device "$d" --op aggregate "${records[@]}" --query fn=count --query "where=$w" "${reps[@]}"
      varex run --device "$d" --op cnf_filter "${records[@]}" --query "where=$w" "${reps[@]}"
    done 2>> "$files/gov32.err" | tr -d '\n' | sed 's/}{/}\n{/g' | tee "$files/gov32_${d//:/_}.jsonl" | python3 -c "$gov_show"
    echo
  done
  step "sec. 5.11 through the runtime library on cuda:0: host time until the count is in hand"
  for w in '' "${filters[@]}"; do
    "$carry/bin/runtime_cuda_timing" --op count --rows 1000000 --where "$w" --calls 101
  done | tee "$files/gov32_runtime.jsonl"
}

# Issue 34's workloads on cuda:0, per operator.
declare -A energy_workload=([selection]="--rows 268435456" [hashjoin]="--rows 16777216 --rows2 268435456"
                            [groupby]="--rows 268435456 --distinct 1048576" [ra_sort]="--rows 67108864")

part_energy34() {
  local budget=${ENERGY_BUDGET:-90s} op objective edb
  export VAREX_VENDOR_LIBRARY=$carry/lib/libvarex_cub.so
  for op in ${ENERGY_OPS:-selection hashjoin groupby ra_sort}; do
    edb=$files/energy34_$op.db
    for objective in energy time; do
      step "tune $op ${energy_workload[$op]} by $objective, energy measured"
      # shellcheck disable=SC2086
      varex tune --op "$op" ${energy_workload[$op]} --device cuda:0 --budget "$budget" --objective "$objective" \
        --energy-ms 100 --db "$edb" --quiet --json > "$files/energy34_${op}_$objective.json"
    done
  done
  python3 scripts/energy_summary.py "$files"/energy34_*.db | tee "$files/energy34.txt"
}

part_energy34_noise() {
  local op objective k sets
  for op in ${NOISE_OPS:-ra_sort}; do
    for objective in time energy; do
      sets=$(varex best --db "$files/energy34_$op.db" --objective "$objective" --json |
        python3 -c "import json,sys; b=json.load(sys.stdin)[0]; print(' '.join('--set %s=%s' % kv for kv in sorted(b['params'].items())))")
      step "$op, best by $objective, five runs: $sets"
      for k in 1 2 3 4 5; do
        # shellcheck disable=SC2086
        varex run --op "$op" ${energy_workload[$op]} --device cuda:0 $sets --energy-ms 100 --json --quiet \
          --db "$files/energy34_noise.db" > "$files/energy34_noise_${op}_${objective}_$k.json"
      done
      python3 scripts/energy_summary.py --runs "$op by $objective" "$files/energy34_noise_${op}_${objective}"_*.json |
        tee -a "$files/energy34_noise.txt"
    done
  done
}

# Issue 33 on a machine of two GPUs and no Slurm: a sweep in two shards, the fleet's task scripts run by hand
# as Slurm would (SLURM_ARRAY_TASK_ID, one GPU each through CUDA_VISIBLE_DEVICES), merged, against the same
# sweep on one GPU. Each run on a fresh database with cold compile caches (varex's and the driver's).
part_fleet33() {
  # shellcheck disable=SC2206
  local sweep=(${FLEET_SWEEP:---op selection --device cuda:0 --rows 2^24}) name=${FLEET_NAME:-fleet33} start end k
  local dir=$files/$name
  step "$name: two shards on two GPUs: ${sweep[*]}"
  rm -rf "$dir" /tmp/varex-cache-fleet*
  varex fleet sweep --dir "$dir" --shards 2 --no-submit "${sweep[@]}"
  start=$(date +%s.%N)
  for k in 0 1; do
    SLURM_ARRAY_TASK_ID=$k CUDA_VISIBLE_DEVICES=$k CUDA_CACHE_DISABLE=1 VAREX_CACHE_DIR=/tmp/varex-cache-fleet$k \
      bash "$dir/task.sh" > "$files/${name}_task$k.log" 2>&1 &
  done
  wait
  end=$(date +%s.%N)
  echo "$name two_gpus wall_s $(python3 -c "print(round($end - $start, 2))")" | tee -a "$files/fleet33_wall.txt"
  varex fleet merge --dir "$dir"
  varex fleet status --dir "$dir"
  step "$name: the same sweep on one GPU"
  start=$(date +%s.%N)
  CUDA_VISIBLE_DEVICES=0 CUDA_CACHE_DISABLE=1 VAREX_CACHE_DIR=/tmp/varex-cache-fleet-one \
    timeout "${FLEET_ONE_LIMIT:-400}" "$carry/bin/varex" sweep "${sweep[@]}" --db "$files/${name}_one.db" --quiet
  end=$(date +%s.%N)
  echo "$name one_gpu wall_s $(python3 -c "print(round($end - $start, 2))")" | tee -a "$files/fleet33_wall.txt"
  for db in "$name/fleet" "${name}_one"; do
    varex export --db "$files/$db.db" --format json --out "$files/${db//\//_}_profile.json"
    varex best --db "$files/$db.db"
  done
}

for part in "${@:-env}"; do "part_$part"; done
step pack
tar -C "$files" -czf "$out/evidence.tar.gz" .
ls -la "$out"
