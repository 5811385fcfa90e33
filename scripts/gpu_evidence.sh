#!/usr/bin/env bash
# The evidence of docs/RESULTS.md, recorded on the lent GPU machine from a build carried in .carry
# (scripts/carry.sh makes it). Each part named on the command line runs in turn against one database
# ($OUT/gpu.db); everything it writes ends up in $OUT/evidence.tar.gz.
#   env        the machine: GPU, driver, OpenCL platforms, varex's devices, copy probes
#   selection  selection sweeps of every GPU device at 2^28 rows, Fett's padding experiment, AUC-bandit
#              tuning at 10% on every device (90 s on CPU devices), the strategy benchmark
#   profiles   export (JSON, header, Kernel Tuner T4), the consumer example built there against the
#              exported header and asked for every device, varex-bench with the profile, the HTML report
set -uo pipefail
cd "$(dirname "$0")/.."
carry=$PWD/.carry
out=${OUT:-/tmp/varex-evidence}
mkdir -p "$out/files"
files=$out/files
db=$files/gpu.db
export VAREX_CACHE_DIR=/tmp/varex-cache
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

for part in "${@:-env}"; do "part_$part"; done
step pack
tar -C "$files" -czf "$out/evidence.tar.gz" .
ls -la "$out"
