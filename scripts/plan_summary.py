#!/usr/bin/env python3
"""Tables of the plans' measurements (docs/PLANS.md) from a report's CSV files (`varex report --out DIR`):
per plan, scale factor and device, the step-by-step and fused plans at their defaults and the tuned one,
each with its data resident and transferred (pinned, pageable, mapped): the measured time (the device's span),
its kernels, transfers and launch gaps. With --duckdb FILE (bench/duckdb_plans.py's JSON lines), DuckDB's
time beside the fastest resident plan.

Usage: scripts/plan_summary.py REPORT_DIR [--duckdb duckdb.jsonl]
"""
import argparse
import csv
import json
import os
import re
from collections import defaultdict


def read(directory, name):
    with open(os.path.join(directory, name), newline="") as f:
        return list(csv.DictReader(f))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--duckdb", action="append", default=[])
    args = parser.parse_args()
    measurements = read(args.report, "measurements.csv")
    parts = defaultdict(lambda: defaultdict(float))
    for k in read(args.report, "kernels.csv"):
        part = "transfers" if k["kernel"] in ("h2d", "d2h") else "launch" if k["kernel"] == "launch" else "kernels"
        parts[(k["session"], k["order"])][part] += float(k["ms"])
    rows = {}
    for m in measurements:
        if m["op"] != "plan" or m["status"] != "ok":
            continue
        workload = m["workload"]
        plan = re.search(r"plan=(\w+)", workload).group(1)
        sf = float(re.search(r"sf=([0-9.e+-]+)", workload).group(1))
        # The defaults of every step's tunables, or a tuned variant (a tune session's, or measured again).
        steps_at_default = all(m[c] in ("", {"local": "256", "ept": "4", "load": "50"}[c.rsplit(".", 1)[1]])
                               for c in m if c.startswith("p_") and c.rsplit(".", 1)[-1] in ("local", "ept", "load"))
        tuned = m["kind"] == "tune" or not steps_at_default
        setting = ("tuned, " if tuned else "defaults, ") + f"fuse={m['p_fuse']}"
        placement = m["p_residency"] + ("" if m["p_residency"] == "resident" else f" ({m['p_memory']})")
        key = (plan, sf, m["device"], setting, placement)
        ms = float(m["kernel_ms"])
        if key not in rows or ms < rows[key][0]:
            rows[key] = (ms, parts[(m["session"], m["order"])], m)
    duck = {}
    for path in args.duckdb:
        with open(path) as f:
            for line in f:
                d = json.loads(line)
                duck[(d["plan"], float(d["sf"]))] = d
    print("| plan | SF | device | variant | data | time ms | kernels ms | transfers ms | launch gaps ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key in sorted(rows):
        ms, p, _ = rows[key]
        plan, sf, device, setting, placement = key
        print(f"| {plan} | {sf:g} | {device} | {setting} | {placement} | {ms:.3f} | {p['kernels']:.3f} | "
              f"{p['transfers']:.3f} | {p['launch']:.3f} |")
    if duck:
        print()
        print("| plan | SF | DuckDB ms (threads) | fastest resident plan: device, variant, ms | DuckDB / it |")
        print("| --- | --- | --- | --- | --- |")
        for (plan, sf), d in sorted(duck.items()):
            resident = [(v[0], k) for k, v in rows.items() if k[0] == plan and k[1] == sf and k[4] == "resident"]
            if not resident:
                continue
            ms, k = min(resident)
            print(f"| {plan} | {sf:g} | {d['duckdb_ms']:.1f} ({d['duckdb_threads']}) | {k[2]}, {k[3]}, {ms:.3f} | "
                  f"{d['duckdb_ms'] / ms:.1f}x |")


if __name__ == "__main__":
    main()
