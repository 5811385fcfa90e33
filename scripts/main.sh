#!/usr/bin/env bash
# Sets up and builds varex, then runs its main job on the default workload on every device of this
# machine: an exhaustive sweep of the selection operator, recorded in ./varex.db, then the best variants.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/varex devices
build/varex sweep --op selection --device all "$@"
build/varex best --op selection
