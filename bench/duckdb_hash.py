#!/usr/bin/env python3
"""The hash join and the group-by through varex's OpenCL CPU device (PoCL) against DuckDB on the same host
cores, on the same generated data.

DuckDB generates the columns (seeded hashes of the row number) and writes them as the files varex reads:
the join's build side (unique keys, a bijection of the row number) and probe side (build keys drawn at
random, every probe row matching), and the group-by's key,value rows with 16 groups and with --groups
groups. varex tunes each operator on them (`varex tune --device cpu --input ...`, the best variant's
kernel time from device events); DuckDB runs the equivalent SQL with as many threads as the host has cores
(median wall time of --reps runs of a query that materialises its result). Prints one JSON line per
workload. Run through scripts/duckdb_compare.sh --hash, which installs DuckDB into .venv-bench.

The two sides do not time the same thing, and the difference favours DuckDB: varex's kernel time
excludes moving the columns into the device's buffers, but its group-by also writes every row's group id
and an extents table, which DuckDB's GROUP BY does not; DuckDB's wall time includes planning and
materialising its result.
"""
import argparse
import json
import os
import sys
import tempfile

import duckdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from duckdb_redfox import duckdb_ms, varex_best  # noqa: E402


def int32_of(expr):
    """A SQL expression that maps a UBIGINT expression onto INTEGER (its low 32 bits, two's complement)."""
    return f"((({expr}) % 4294967296)::BIGINT - 2147483648)::INTEGER"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--varex", default="build/varex")
    parser.add_argument("--build-rows", type=int, default=1 << 20)
    parser.add_argument("--probe-rows", type=int, default=1 << 22)
    parser.add_argument("--group-rows", type=int, default=1 << 22)
    parser.add_argument("--groups", type=int, default=1 << 16, help="the many-groups workload's groups")
    parser.add_argument("--budget", default="30s", help="varex tune budget per workload")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--workloads", default="join,groupby", help="join, groupby or both")
    parser.add_argument("--join-set", action="append", default=None,
                        help="a --set of the join's tuning (repeatable; default plan=unique)")
    args = parser.parse_args()
    wanted = args.workloads.split(",")
    threads = os.cpu_count()
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    with tempfile.TemporaryDirectory() as tmp:
        build, probe = os.path.join(tmp, "build.txt"), os.path.join(tmp, "probe.txt")
        # Unique build keys: i * 2654435761 modulo 2^32 is a bijection of the row number.
        con.execute(f"CREATE TABLE b AS SELECT i AS pos, {int32_of('i * 2654435761')} AS k "
                    f"FROM range({args.build_rows}) t(i)")
        con.execute(f"CREATE TABLE p AS SELECT j AS pos, {int32_of(f'(hash(j) % {args.build_rows}) * 2654435761')} "
                    f"AS k FROM range({args.probe_rows}) t(j)")
        con.execute(f"COPY (SELECT k FROM b ORDER BY pos) TO '{build}' (HEADER false)")
        con.execute(f"COPY (SELECT k FROM p ORDER BY pos) TO '{probe}' (HEADER false)")
        # The join is tuned over the single-pass plan only: on a CPU device at these sizes one variant of the
        # source's sequence takes seconds to measure and eats the budget, and the PoCL of the lent GPU
        # machine (5.0) aborts in its compiler on kernels with a work-group scan inside a loop: there,
        # --join-set append=item keeps to the barrier-free probe.
        workloads = [("hashjoin", "join", [build, probe],
                      "SELECT b.pos AS build_row, p.pos AS probe_row FROM b JOIN p ON b.k = p.k",
                      {"build_rows": args.build_rows, "probe_rows": args.probe_rows},
                      [a for kv in (args.join_set or ["plan=unique"]) for a in ("--set", kv)])]
        for groups in (16, args.groups):
            rows = os.path.join(tmp, f"groups{groups}.csv")
            table = f"g{groups}"
            con.execute(f"CREATE TABLE {table} AS SELECT i AS pos, {int32_of(f'hash(i) % {groups} * 2654435761')} AS k, "
                        f"{int32_of('hash(i + 977) % 2000001')} AS v FROM range({args.group_rows}) t(i)")
            con.execute(f"COPY (SELECT k, v FROM {table} ORDER BY pos) TO '{rows}' (HEADER false)")
            workloads.append(("groupby", f"groupby {groups} groups", [rows],
                              f"SELECT k, count(*), sum(v), min(v), max(v) FROM {table} GROUP BY k",
                              {"rows": args.group_rows, "groups": groups}, []))
        for op, name, files, sql, shape, extra in workloads:
            if name.split()[0] not in wanted:
                continue
            try:
                varex_ms, params = varex_best(args.varex, op, files, args.budget, extra)
            except Exception as e:  # a failed tuning is reported, the other workloads go on
                print(json.dumps({"workload": name, "error": str(e)[-300:]}), flush=True)
                continue
            duck = duckdb_ms(con, sql, args.reps)
            print(json.dumps({"workload": name, **shape, "threads": threads, "varex_pocl_ms": round(varex_ms, 3),
                              "duckdb_ms": round(duck, 3), "varex_over_duckdb": round(varex_ms / duck, 3),
                              "varex_best": params}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
