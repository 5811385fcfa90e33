#!/usr/bin/env bash
# Profile and benchmark evidence on the GPU machine, continuing the database of the earlier evidence
# scripts ($DB). Carried in .carry: varex, varex-bench (+ libbenchmark), profile_consumer built against a
# header exported from the same database, and that profile as JSON (.carry/profile.json).
#  1. the same PoCL sub-space sweep command again, which resumes the interrupted session;
#  2. the consumer example asks both profiles (JSON at run time, header compiled in) for every device;
#  3. varex-bench: default, tuned (from the profile) and runtime-copy cases on every device.
set -uo pipefail
varex=${VAREX:-.carry/varex}
out=${OUT:-/tmp}
db=${DB:-$out/selection.db}
"$varex" sweep --op selection --device ocl:0:0 --rows 2^28 --db "$db" --set local=auto,128,1024,4096 \
  --set groups_per_cu=cover,1,4 --min-reps 3 --json > "$out/sweep_pocl_resumed.json"
"$varex" devices --json > "$out/devices.json"
python3 - "$out/devices.json" > "$out/consumer.txt" <<'PY'
import json, subprocess, sys
for d in json.load(open(sys.argv[1])):
    args = [".carry/profile_consumer", "--profile", ".carry/profile.json", "--backend", d["backend"], "--vendor", d["vendor"],
            "--name", d["name"], "--arch", d["arch"], "--type", d["type"], "--rows", "268435456"]
    print(f"== {d['id']} {d['name']}", flush=True)
    subprocess.run(args, check=True)
PY
cat "$out/consumer.txt"
LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-} .carry/varex-bench --varex-device=all --varex-rows=2^28 \
  --varex-profile=.carry/profile.json --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json
