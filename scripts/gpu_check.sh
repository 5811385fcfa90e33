#!/usr/bin/env bash
# A quick check of a carried build on a GPU machine: devices, the copy probe, the source's default and
# one tuned variant per device at 2^28 rows, and every variant of the space verified on the GPU devices
# at a small, odd size. Writes check.db and logs under $OUT (or /tmp).
set -uo pipefail
varex=${VAREX:-.carry/varex}
out=${OUT:-/tmp}
db=$out/check.db
"$varex" devices
"$varex" probe --device all --db "$db"
ids=$("$varex" devices --json | python3 -c "import json,sys; print(' '.join(d['id'] for d in json.load(sys.stdin)))")
for d in $ids; do
  "$varex" run --op selection --device "$d" --rows 2^28 --db "$db"
  "$varex" run --op selection --device "$d" --rows 2^28 --db "$db" --set kernel=overflow --set ept=32 \
    --set vec=4 --set padding=guard --set local=256
done
time "$varex" sweep --op selection --device gpu --rows 1000003 --db "$db" --warmup 0 --min-reps 1 --max-reps 1
"$varex" best --db "$db"
