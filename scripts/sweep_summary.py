#!/usr/bin/env python3
"""Summarises the sweeps in a varex database: per device, the best variant, the source's default variant,
how many variants come within 5% of the best, and the best time reached with each value of each tunable.

Usage: scripts/sweep_summary.py DB [--op selection] [--rows N]
"""
import argparse
import json
import sqlite3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--op", default="selection")
    parser.add_argument("--rows", type=int, default=None, help="only workloads of this many rows")
    parser.add_argument("--default", default='{"ept":8,"grid":"cover","kernel":"loop","local":"auto","padding":"none","vec":1}',
                        help="the source's default variant, as canonical JSON")
    args = parser.parse_args()
    db = sqlite3.connect(args.db)
    sessions = db.execute(
        """SELECT s.id, d.local_id, d.name, d.probe_gbps, w.rows, s.status FROM sessions s
           JOIN devices d ON d.id = s.device_id JOIN workloads w ON w.id = s.workload_id
           WHERE s.kind = 'sweep' AND s.op = ? ORDER BY s.id""", (args.op,)).fetchall()
    default = json.dumps(json.loads(args.default), sort_keys=True, separators=(",", ":"))
    for sid, device, name, probe, rows, status in sessions:
        if args.rows and rows != args.rows:
            continue
        found = db.execute(
            """SELECT v.params, m.status, m.kernel_ms, m.gbps, m.probe_fraction FROM measurements m
               JOIN variants v ON v.id = m.variant_id WHERE m.session_id = ?""", (sid,)).fetchall()
        ok = [(json.loads(p), p, k, g, f) for p, st, k, g, f in found if st == "ok"]
        failed = len(found) - len(ok)
        if not ok:
            continue
        ok.sort(key=lambda r: r[2])
        best = ok[0]
        within = sum(1 for r in ok if r[2] <= 1.05 * best[2])
        print(f"## {device} ({name}), {rows} rows, session {sid} ({status})")
        print(f"measured {len(found)} variants, {len(ok)} verified, {failed} failed; probe {probe:.1f} GB/s")
        print(f"best     {best[2]:.4f} ms  {best[3]:.1f} GB/s  {100 * best[4]:.1f}% of probe  {best[1]}")
        for params, canon, k, g, f in ok:
            if canon == default:
                print(f"default  {k:.4f} ms  {g:.1f} GB/s  {100 * f:.1f}% of probe  (best is {k / best[2]:.2f}x faster)")
        print(f"worst    {ok[-1][2]:.4f} ms ({ok[-1][2] / best[2]:.1f}x the best)  {ok[-1][1]}")
        print(f"{within} variants ({100 * within / len(ok):.1f}%) within 5% of the best")
        print("best time per tunable value (ms):")
        for tunable in sorted(best[0]):
            values = {}
            for params, _, k, _, _ in ok:
                v = str(params[tunable])
                values[v] = min(values.get(v, float("inf")), k)
            cells = "  ".join(f"{v}={t:.4f}" for v, t in sorted(values.items(), key=lambda kv: kv[1]))
            print(f"  {tunable:14s} {cells}")
        print()


if __name__ == "__main__":
    main()
