#!/usr/bin/env python3
"""The Red Fox primitives through varex's OpenCL CPU device (PoCL) against DuckDB on the same host cores.

Writes one relation (and a second for the product, JOIN and the set operations) as key,value lines, tunes each varex operator on it
(`varex tune --device cpu --input FILE`, the best variant's re-measured kernel time from device events) and
runs the equivalent SQL in DuckDB with as many threads as the host has cores (median wall time of --reps
runs of a query that materialises its result). Prints one JSON line per primitive with both times and
their ratio. Run through scripts/duckdb_compare.sh, which installs DuckDB into .venv-bench.

The two sides do not time the same thing: varex's kernel time excludes moving the relation into the
device's buffers (a copy on a CPU device); DuckDB's wall time includes its planning and its result's
materialisation. Both get the relation already loaded.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

MASK = 0xFFFFFFFF


def write_relation(path, keys, values):
    with open(path, "w") as out:
        out.writelines(f"{k},{v}\n" for k, v in zip(keys, values))


def uniform(rows, seed):
    rng = random.Random(seed)
    return [rng.getrandbits(32) for _ in range(rows)], [rng.getrandbits(32) for _ in range(rows)]


def runs(rows, run, seed):
    """Ascending keys, each repeated `run` times (varex's --keys runs)."""
    rng = random.Random(seed)
    keys = [(i // run) * 7919 & MASK for i in range(rows)]
    return keys, [rng.getrandbits(32) for _ in range(rows)]


def sorted_pair(rows, seed):
    """Two relations sorted by (key, value), as varex's generated pairs for JOIN and the set operations
    (--match-ratio 1): every right tuple takes the key of a left tuple drawn at random, half of them its
    value too."""
    rng = random.Random(seed)
    left = sorted((rng.getrandbits(32), rng.getrandbits(32)) for _ in range(rows))
    right = []
    for _ in range(rows):
        k, v = left[rng.randrange(rows)]
        right.append((k, v if rng.getrandbits(1) else rng.getrandbits(32)))
    right.sort()
    return [k for k, _ in left], [v for _, v in left], [k for k, _ in right], [v for _, v in right]


def varex_best(varex, op, files, budget, extra):
    command = [varex, "tune", "--op", op, "--device", "cpu", "--input", files[0], "--budget", budget,
               "--min-reps", "3", "--max-reps", "10", "--quiet", "--json", "--db", os.path.join(os.path.dirname(files[0]), "varex.db")]
    if len(files) > 1:
        command += ["--input2", files[1]]
    run = subprocess.run(command + extra, check=True, capture_output=True, text=True)
    session = json.loads(run.stdout)[0]
    if "best" not in session:  # no variant verified within the budget: say what happened
        raise RuntimeError(f"no verified variant: {json.dumps(session)} {run.stderr[-400:]}")
    best = session["best"]
    return best["kernel_ms"], best["params"]


def duckdb_ms(con, sql, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        con.execute(f"CREATE OR REPLACE TEMP TABLE result AS {sql}")
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--varex", default="build/varex")
    parser.add_argument("--rows", type=int, default=1 << 22)
    parser.add_argument("--budget", default="20s", help="varex tune budget per primitive")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--ops", default="ra_select,ra_reduce,ra_product,ra_unique,ra_reduce_by_key,ra_sort,"
                        "ra_join,ra_intersect,ra_union,ra_difference")
    args = parser.parse_args()
    ops = args.ops.split(",")
    threads = os.cpu_count()
    with tempfile.TemporaryDirectory() as tmp:
        rel = os.path.join(tmp, "r.csv")
        keys, values = uniform(args.rows, 1)
        write_relation(rel, keys, values)
        runs_rel = os.path.join(tmp, "runs.csv")
        write_relation(runs_rel, *runs(args.rows, 16, 2))
        # The product's two sides: 2^12 x 2^13 tuples as in the source's largest class, at most.
        n, m = min(1 << 12, args.rows), min(1 << 13, args.rows)
        left, right = os.path.join(tmp, "left.csv"), os.path.join(tmp, "right.csv")
        write_relation(left, *uniform(n, 3))
        write_relation(right, *uniform(m, 4))

        # JOIN and the set operations: two sorted relations of --rows tuples each.
        sleft, sright = os.path.join(tmp, "sleft.csv"), os.path.join(tmp, "sright.csv")
        lk, lv, rk, rv = sorted_pair(args.rows, 5)
        write_relation(sleft, lk, lv)
        write_relation(sright, rk, rv)

        con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
        schema = "{'key': 'UBIGINT', 'v0': 'UBIGINT'}"
        for table, path in (("r", rel), ("runs", runs_rel), ("l", left), ("rr", right),
                            ("sl", sleft), ("sr", sright)):
            con.execute(f"CREATE TABLE {table} AS SELECT row_number() OVER () AS pos, * FROM "
                        f"read_csv('{path}', header=false, columns={schema})")
        half = 1 << 31
        primitives = {
            "ra_select": ([rel], ["--query", "lo=0", "--query", f"hi={half - 1}"],
                          f"SELECT key, v0 FROM r WHERE key < {half}"),
            "ra_reduce": ([rel], [], "SELECT SUM(v0) FROM r"),
            "ra_product": ([left, right], [], "SELECT l.key, rr.key, l.v0, rr.v0 FROM l CROSS JOIN rr"),
            "ra_unique": ([runs_rel], [],
                          "SELECT key, v0 FROM (SELECT key, v0, LAG(key) OVER (ORDER BY pos) AS prev FROM runs) "
                          "WHERE prev IS DISTINCT FROM key"),
            "ra_reduce_by_key": ([runs_rel], [],
                                 "SELECT MIN(key), SUM(v0) % 4294967296 FROM (SELECT key, v0, SUM(CASE WHEN prev IS "
                                 "DISTINCT FROM key THEN 1 ELSE 0 END) OVER (ORDER BY pos) AS run FROM (SELECT key, v0, "
                                 "pos, LAG(key) OVER (ORDER BY pos) AS prev FROM runs)) GROUP BY run"),
            "ra_sort": ([rel], [], "SELECT key, v0 FROM r ORDER BY key, v0"),
            "ra_join": ([sleft, sright], [], "SELECT sl.key, sl.v0, sr.v0 FROM sl JOIN sr ON sl.key = sr.key"),
            # Multiset semantics as std::set_*: INTERSECT ALL gives min(m, n) copies, EXCEPT ALL max(m - n, 0);
            # max(m, n) for the union is (left EXCEPT ALL right) UNION ALL right.
            "ra_intersect": ([sleft, sright], [], "SELECT key, v0 FROM sl INTERSECT ALL SELECT key, v0 FROM sr"),
            "ra_union": ([sleft, sright], [], "(SELECT key, v0 FROM sl EXCEPT ALL SELECT key, v0 FROM sr) "
                                              "UNION ALL SELECT key, v0 FROM sr"),
            "ra_difference": ([sleft, sright], [], "SELECT key, v0 FROM sl EXCEPT ALL SELECT key, v0 FROM sr"),
        }
        for op in ops:
            files, extra, sql = primitives[op]
            try:
                varex_ms, params = varex_best(args.varex, op, files, args.budget, extra)
            except subprocess.CalledProcessError as e:
                print(json.dumps({"op": op, "error": e.stderr.strip().splitlines()[-1:]}), flush=True)
                continue
            duck = duckdb_ms(con, sql, args.reps)
            print(json.dumps({"op": op, "rows": args.rows if op != "ra_product" else [n, m], "threads": threads,
                              "varex_pocl_ms": round(varex_ms, 3), "duckdb_ms": round(duck, 3),
                              "varex_over_duckdb": round(varex_ms / duck, 3), "varex_best": params}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
