#!/usr/bin/env bash
# The Red Fox primitives on varex's OpenCL CPU device against DuckDB on the same cores
# (bench/duckdb_redfox.py). Installs DuckDB from PyPI into .venv-bench on first use.
# Usage: scripts/duckdb_compare.sh [--rows N] [--budget 20s] [--ops ra_select,ra_reduce,...]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/varex ] || scripts/setup.sh build >/dev/null
if [ ! -x .venv-bench/bin/python ]; then
  /usr/bin/python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q "duckdb==2.0.0"
fi
exec .venv-bench/bin/python bench/duckdb_redfox.py --varex build/varex "$@"
