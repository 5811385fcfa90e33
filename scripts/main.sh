#!/usr/bin/env bash
# Sets up and builds varex, then runs its main job on the default workload on every device of this
# machine: the selection operator tuned with the default strategy (genetic) on 10% of the exhaustive cost,
# recorded in ./varex.db (running it again resumes or reports the same sessions), then the best variants.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what the job runs: the varex binary, and the CUB library for the architectures of this machine's
# NVIDIA GPUs (none where there is none: without a CUDA device no variant calls it). The tests, the
# benchmark binary and other architectures are scripts/test.sh's and scripts/carry.sh's.
archs="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d '. ' | sort -u | paste -sd';' || true)"
if [ -n "$archs" ]; then
  vendor=(-DVAREX_VENDOR=ON "-DVAREX_VENDOR_ARCHS=$archs")
else
  vendor=(-DVAREX_VENDOR=OFF)
fi
scripts/setup.sh --target varex build "${vendor[@]}"
build/varex devices
build/varex tune --op selection --device all --strategy genetic --budget 10% "$@"
build/varex best --op selection
