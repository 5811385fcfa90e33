#!/usr/bin/env bash
# Formats the C++, OpenCL and CUDA sources with the repository's .clang-format; --check only reports.
set -euo pipefail
cd "$(dirname "$0")/.."
# Tracked files and new ones git does not ignore (a new file is checked before it is committed).
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.hpp' '*.cl' '*.cu')
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror "${files[@]}"
else
  clang-format -i "${files[@]}"
fi
