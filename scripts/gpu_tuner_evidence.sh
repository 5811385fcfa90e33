#!/usr/bin/env bash
# The tuner evidence of docs/RESULTS.md on the GPU machine, continuing the database of
# scripts/gpu_selection_evidence.sh ($DB): the PoCL sub-space sweep that hit the time limit is resumed by
# running the same command again; both GPU sweeps are recorded again with per-variant costs (wall times,
# which the first sweeps did not keep); then each device is tuned live with the AUC bandit on 10%.
set -uo pipefail
varex=${VAREX:-.carry/varex}
out=${OUT:-/tmp}
db=${DB:-$out/selection.db}
pocl_space=(--set local=auto,128,1024,4096 --set groups_per_cu=cover,1,4)
"$varex" sweep --op selection --device ocl:0:0 --rows 2^28 --db "$db" "${pocl_space[@]}" --min-reps 3 --json \
  > "$out/sweep_pocl_resumed.json"
"$varex" sweep --op selection --device cuda:0,ocl:1:0 --rows 2^28 --db "$db" --fresh --json > "$out/sweep_gpu_v2.json"
"$varex" tune --op selection --device cuda:0,ocl:1:0 --rows 2^28 --db "$db" --strategy auc_bandit --budget 10% \
  --json > "$out/tune_gpu.json"
"$varex" tune --op selection --device ocl:0:0 --rows 2^28 --db "$db" "${pocl_space[@]}" --min-reps 3 \
  --strategy auc_bandit --budget 10% --json > "$out/tune_pocl.json"
"$varex" best --db "$db"
