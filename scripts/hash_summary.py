#!/usr/bin/env python3
"""Lists every measurement of the hash join and the group-by in a varex database, one line each: device,
workload, the variant's plan-level knobs, status, kernel time, rows per second and the three slowest
kernels. Used by scripts/gpu_evidence.sh (part hash16) to print what it measured.

Usage: scripts/hash_summary.py DB [--since ID]
"""
import argparse
import json
import sqlite3

KNOBS = {"hashjoin": ["plan", "append", "batch", "local", "grid", "radix_bits", "scatter", "passes", "probing", "load",
                      "preprocess"],
         "groupby": ["agg", "fuse", "build", "sizing", "extents", "local", "grid", "scatter", "passes", "probing",
                     "load"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--since", type=int, default=0, help="only measurements after this id")
    args = parser.parse_args()
    db = sqlite3.connect(args.db)
    rows = db.execute(
        """SELECT m.id, d.local_id, w.op, w.params, v.params, m.status, m.kernel_ms, m.kernels, m.error
           FROM measurements m JOIN devices d ON d.id = m.device_id JOIN workloads w ON w.id = m.workload_id
           JOIN variants v ON v.id = m.variant_id
           WHERE w.op IN ('hashjoin', 'groupby') AND m.id > ? ORDER BY m.id""", (args.since,)).fetchall()
    for mid, device, op, workload, params, status, ms, kernels, error in rows:
        w = json.loads(workload)
        p = json.loads(params)
        probe_rows = w.get("rows2", w.get("rows"))
        shape = (f"{w.get('rows')}x{w.get('rows2')}" if op == "hashjoin" else f"{w.get('rows')}") + \
            f" d={w.get('distinct')} z={w.get('zipf')}" + (f" m={w.get('match_ratio')}" if op == "hashjoin" else "")
        knobs = " ".join(f"{k}={p[k]}" for k in KNOBS[op] if k in p)
        line = f"{mid} {device} {op} {shape} | {knobs} | {status}"
        if ms:
            slow = sorted(json.loads(kernels), key=lambda k: -k.get("ms", 0))[:3]
            line += f" {ms:.3f} ms {probe_rows / ms / 1e6:.1f} G rows/s | " + \
                " ".join(f"{k['kernel']}={k['ms']:.3f}" for k in slow)
        else:
            line += f" {error[:120]}"
        print(line)


if __name__ == "__main__":
    main()
