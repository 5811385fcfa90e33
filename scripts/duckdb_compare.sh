#!/usr/bin/env bash
# varex's OpenCL CPU device against DuckDB on the same cores: the Red Fox primitives
# (bench/duckdb_redfox.py), or with --hash the hash join and the group-by (bench/duckdb_hash.py). Installs
# DuckDB from PyPI into .venv-bench on first use.
# Usage: scripts/duckdb_compare.sh [--rows N] [--budget 20s] [--ops ra_select,ra_reduce,...]
#        scripts/duckdb_compare.sh --hash [--build-rows N] [--probe-rows N] [--group-rows N] [--groups N]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/varex ] || scripts/setup.sh build >/dev/null
if [ ! -x .venv-bench/bin/python ]; then
  /usr/bin/python3 -m venv .venv-bench
  .venv-bench/bin/pip install -q "duckdb==2.0.0"
fi
script=bench/duckdb_redfox.py
if [ "${1:-}" = --hash ]; then
  script=bench/duckdb_hash.py
  shift
fi
exec .venv-bench/bin/python "$script" --varex build/varex "$@"
