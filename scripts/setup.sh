#!/usr/bin/env bash
# Installs the Debian packages varex builds against (only those missing), then configures and builds.
# Usage: scripts/setup.sh [--target NAME]... [build-dir] [extra cmake arguments...]
# With --target only those targets (and what they need) are built; without, everything.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config
  ocl-icd-opencl-dev opencl-c-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  nlohmann-json3-dev libcli11-dev libsqlite3-dev sqlite3
  libbenchmark-dev libbenchmark-tools libgtest-dev googletest
  libre2-dev libhyperscan-dev libncurses-dev wamerican
  clang-format
  python3 python3-matplotlib python3-scipy
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
    { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null; }
fi

targets=()
while [ "${1:-}" = "--target" ]; do
  targets+=(--target "$2")
  shift 2
done
build_dir="${1:-build}"
shift || true
jobs="$(nproc)"
# Ninja for a new build folder (it schedules the two cores better than make); a folder configured
# before keeps its generator, which CMake cannot change in place.
generator=()
[ -f "$build_dir/CMakeCache.txt" ] || generator=(-G Ninja)
cmake "${generator[@]}" -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
