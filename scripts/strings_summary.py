#!/usr/bin/env python3
"""Summarises the string operators' sweeps in a varex database as document 003 reports them: per device,
operator, query and selectivity the best verified naive and lane-refill variants (per automaton layout
for str_like and regex, and LIKE's segments), refill's speed-up, and the string bytes per second of the faster kernel.

Usage: scripts/strings_summary.py DB [--markdown]
"""
import argparse
import json
import sqlite3

OPS = ("str_equal", "str_prefix", "str_like", "regex")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables")
    args = parser.parse_args()
    db = sqlite3.connect(args.db)
    rows = db.execute(
        """SELECT d.local_id, d.name, w.op, w.params, w.query, w.rows, v.params, m.kernel_ms, m.bytes_moved
           FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN devices d ON d.id = m.device_id
           JOIN workloads w ON w.id = m.workload_id
           WHERE m.status = 'ok' AND w.op IN (%s)""" % ",".join("?" * len(OPS)), OPS).fetchall()
    failed = db.execute(
        """SELECT d.local_id, w.op, m.status, count(*) FROM measurements m JOIN devices d ON d.id = m.device_id
           JOIN workloads w ON w.id = m.workload_id WHERE m.status != 'ok' AND w.op IN (%s)
           GROUP BY 1, 2, 3""" % ",".join("?" * len(OPS)), OPS).fetchall()

    # (device, op, dataset, query, rows, selectivity, layout) -> {kernel: (ms, string_bytes, params)}
    best = {}
    for device, name, op, wparams, query, nrows, vparams, ms, moved in rows:
        w, v = json.loads(wparams), json.loads(vparams)
        words = (nrows + 31) // 32
        string_bytes = moved - (nrows + 1) * 4 - words * 4  # bytes_moved counts offsets and bitmap too
        key = (device, op, w.get("dataset", "file"), json.loads(query).popitem()[1], nrows,
               w.get("selectivity"), "segments" if v.get("algorithm") == "segments" else v.get("layout", "-"))
        cell = best.setdefault(key, {})
        if v["kernel"] not in cell or ms < cell[v["kernel"]][0]:
            cell[v["kernel"]] = (ms, string_bytes, v)

    header = ["device", "op", "data", "query", "rows", "sel", "layout", "naive ms", "refill ms",
              "refill speed-up", "GB/s of strings (faster)"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
    for key in sorted(best, key=lambda k: (k[0], OPS.index(k[1]), k[2], k[3], k[4], k[5] or 0, k[6])):
        device, op, data, query, nrows, sel, layout = key
        cell = best[key]
        naive, refill = cell.get("naive"), cell.get("refill")
        speedup = f"{naive[0] / refill[0]:.2f}x" if naive and refill else "-"
        fastest = min((c for c in (naive, refill) if c), key=lambda c: c[0])
        gbs = fastest[1] / fastest[0] / 1e6
        fields = [device, op, data, f"`{query}`", str(nrows), "-" if sel is None else f"{100 * sel:g}%", layout,
                  f"{naive[0]:.4f}" if naive else "-", f"{refill[0]:.4f}" if refill else "-", speedup,
                  f"{gbs:.1f}"]
        print(("| " + " | ".join(fields) + " |") if args.markdown else "  ".join(fields))
    for device, op, status, count in failed:
        print(f"{device} {op}: {count} measurements {status}")


if __name__ == "__main__":
    main()
