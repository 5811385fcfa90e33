#!/usr/bin/env bash
# varex's OpenCL CPU device against DuckDB on the same cores: the Red Fox primitives
# (bench/duckdb_redfox.py), with --hash the hash join and the group-by (bench/duckdb_hash.py), or with
# --plans the TPC-H plans (bench/duckdb_plans.py: same results, DuckDB's time, and with --device varex's).
# Installs DuckDB from PyPI into .venv-bench on first use.
# Usage: scripts/duckdb_compare.sh [--rows N] [--budget 20s] [--ops ra_select,ra_reduce,...]
#        scripts/duckdb_compare.sh --hash [--build-rows N] [--probe-rows N] [--group-rows N] [--groups N]
#        scripts/duckdb_compare.sh --plans [--sf X] [--plans A,B,C,D,E] [--device cpu --budget 30s]
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
elif [ "${1:-}" = --plans ]; then
  script=bench/duckdb_plans.py
  shift
fi
exec .venv-bench/bin/python "$script" --varex build/varex "$@"
