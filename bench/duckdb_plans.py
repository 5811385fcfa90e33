#!/usr/bin/env python3
"""The plans (docs/PLANS.md) in DuckDB on the same generated data, and their results against varex's.

For each plan, `varex tpch` writes the columns the plan reads as CSV files, and a summary of the plan's
reference result: each output's rows and each column's exact sum in the column's own units (days,
hundredths, dictionary codes). varex verifies every device result against that same reference, so a
DuckDB result that reproduces the summary agrees with every verified varex variant.

DuckDB loads the files into tables (DATE, DECIMAL(15,2), VARCHAR, INTEGER) and runs the plan's SQL
statements (one per output) with as many threads as the host has cores: the plan's time is the median
over --reps runs of all its statements, each materialising its result in a temporary table (as varex's
resident plans leave their outputs in device memory). Loading the files is not timed.

With --device, varex tunes each plan on that device with its data resident (`varex plan tune`) for
--budget and reports the best variant's time beside DuckDB's. Prints one JSON line per plan; exits 1 if a
result differs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

SQL_TYPES = {"date": "DATE", "decimal": "DECIMAL(15,2)", "int": "INTEGER", "dict": "VARCHAR"}


def units(column, name):
    """The expression that turns an output column into varex's units, exactly."""
    kind = column["type"]
    if kind == "date":
        return f"CAST({name} - DATE '1970-01-01' AS HUGEINT)"
    if kind == "decimal":
        return f"CAST({name} * {10 ** column['scale']} AS HUGEINT)"
    if kind == "dict":
        values = ", ".join("'" + v.replace("'", "''") + "'" for v in column["dictionary"])
        return f"CAST(list_position([{values}], {name}) - 1 AS HUGEINT)"
    return f"CAST({name} AS HUGEINT)"


def load(con, directory, tables):
    for table, columns in tables.items():
        types = ", ".join(f"'{c['name']}': '{SQL_TYPES[c['type']]}'" for c in columns)
        path = os.path.join(directory, table + ".csv")
        con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM read_csv('{path}', header = true, "
                    f"columns = {{{types}}})")


def check(con, summary):
    """Each output's rows and column sums from DuckDB against varex's reference; the differences."""
    problems = []
    for output, sql in zip(summary["outputs"], summary["sql"]):
        names = [f"c{i}" for i in range(len(output["columns"]))]
        sums = ", ".join(f"sum({units(c, n)})" for c, n in zip(output["columns"], names))
        got = con.execute(f"SELECT count(*), {sums} FROM ({sql}) AS q({', '.join(names)})").fetchone()
        if got[0] != output["rows"]:
            problems.append(f"{output['id']}: {got[0]} rows, varex {output['rows']}")
            continue
        for c, value in zip(output["columns"], got[1:]):
            if str(value if value is not None else 0) != c["sum"]:
                problems.append(f"{output['id']}.{c['name']}: sum {value}, varex {c['sum']}")
    return problems


def duckdb_ms(con, statements, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for i, sql in enumerate(statements):
            con.execute(f"CREATE OR REPLACE TEMP TABLE result{i} AS {sql}")
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def varex_best(varex, plan, sf, device, budget, db):
    command = [varex, "plan", "tune", plan, "--device", device, "--sf", str(sf), "--set", "residency=resident",
               "--budget", budget, "--quiet", "--json", "--db", db]
    run = subprocess.run(command, check=True, capture_output=True, text=True)
    session = json.loads(run.stdout)[0]
    if "best" not in session:
        raise RuntimeError(f"no verified variant: {json.dumps(session)} {run.stderr[-400:]}")
    return session["best"]["kernel_ms"], session["best"]["params"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--varex", default="build/varex")
    parser.add_argument("--plans", default="A,B,C,D,E")
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--device", help="also tune each plan on this device (resident data)")
    parser.add_argument("--budget", default="30s", help="varex tune budget per plan")
    parser.add_argument("--db", help="varex's database for --device (default: a temporary one)")
    parser.add_argument("--keep", help="write the tables under this directory and keep them")
    args = parser.parse_args()
    threads = os.cpu_count()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or tmp
        for plan in args.plans.split(","):
            directory = os.path.join(root, f"{plan}-sf{args.sf}")
            run = subprocess.run([args.varex, "tpch", "--plan", plan, "--sf", str(args.sf), "--seed", str(args.seed),
                                  "--out", directory], check=True, capture_output=True, text=True)
            summary = json.loads(run.stdout)
            con = duckdb.connect()
            con.execute(f"SET threads TO {threads}")
            load(con, directory, summary["tables"])
            problems = check(con, summary)
            line = {"plan": plan, "sf": args.sf, "rows": [o["rows"] for o in summary["outputs"]],
                    "duckdb_ms": round(duckdb_ms(con, summary["sql"], args.reps), 3), "duckdb_threads": threads,
                    "duckdb_version": duckdb.__version__, "same_result": not problems}
            if problems:
                line["differences"] = problems
                failed = True
            if args.device:
                ms, params = varex_best(args.varex, plan, args.sf, args.device, args.budget,
                                        args.db or os.path.join(tmp, "varex.db"))
                line.update({"device": args.device, "varex_ms": ms, "varex_params": params,
                             "duckdb_over_varex": round(line["duckdb_ms"] / ms, 2)})
            print(json.dumps(line), flush=True)
            con.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
