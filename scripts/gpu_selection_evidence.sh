#!/usr/bin/env bash
# The selection evidence of docs/RESULTS.md, on a machine with the PoCL CPU device (ocl:0:0), the NVIDIA
# OpenCL device (ocl:1:0) and the same GPU through CUDA (cuda:0). Part "gpu": whole-space correctness at an
# odd size, the copy probes, Fett's padding experiment on every device, and exhaustive 2^28-row sweeps on
# both GPU devices. Part "cpu": the PoCL sweep at 2^28 rows over a sub-space (the whole space would take
# about an hour there). Results go to $DB (default $OUT/selection.db) and JSON files under $OUT.
set -uo pipefail
varex=${VAREX:-.carry/varex}
out=${OUT:-/tmp}
db=${DB:-$out/selection.db}
part=${1:-gpu}

# Fett's padding experiment: case A is the source's kernel with the driver's local size and no padding;
# case B the overflow kernel, local size 128, grid padded with a kernel guard.
padding_experiment() {
  for d in ocl:0:0 ocl:1:0 cuda:0; do
    for case in "kernel=loop local=auto padding=none" "kernel=overflow local=128 padding=guard"; do
      sets=()
      for s in ept=8 $case; do sets+=(--set "$s"); done
      "$varex" run --op selection --device "$d" --rows "$1" --db "$db" "${sets[@]}" --json
    done
  done
}
if [ "$part" = gpu ]; then
  "$varex" devices --json > "$out/devices.json"
  "$varex" sweep --op selection --device gpu --rows 1000003 --db "$out/correctness.db" --warmup 0 --min-reps 1 \
    --max-reps 1 --json > "$out/correctness.json"
  "$varex" probe --device all --db "$db" --json > "$out/probe.json"
  padding_experiment 11999989 > "$out/padding.json"
  "$varex" sweep --op selection --device cuda:0 --rows 2^28 --db "$db" --json > "$out/sweep_cuda.json"
  "$varex" sweep --op selection --device ocl:1:0 --rows 2^28 --db "$db" --json > "$out/sweep_ocl_gpu.json"
else
  # Fett's own selection case: 16,000,008 rows = 2,000,001 work-items of 8 rows (= 3 x 666,667).
  padding_experiment 16000008 > "$out/padding_fett.json"
  "$varex" sweep --op selection --device ocl:0:0 --rows 2^28 --db "$db" --set local=auto,128,1024,4096 \
    --set groups_per_cu=cover,1,4 --min-reps 3 --json > "$out/sweep_pocl.json"
  cp "$db" "$out/selection.db"
fi
"$varex" best --db "$db"
