#!/usr/bin/env bash
# Sets up and builds varex, then runs its main job on the default workload on every device of this
# machine: the selection operator tuned with the default strategy (ensemble) on 10% of the exhaustive cost,
# recorded in ./varex.db (running it again resumes or reports the same sessions), then the best variants.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/varex devices
build/varex tune --op selection --device all --strategy ensemble --budget 10% "$@"
build/varex best --op selection
