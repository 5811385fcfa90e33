#!/usr/bin/env python3
"""Issue 34's tables from the energy34 part's databases (scripts/gpu_evidence.sh), one per operator:

- the fastest, the most frugal and the edp best among the re-measured candidates (as `varex best --objective`
  ranks them), each with its time, energy per repetition and power;
- the Pareto front of time against energy per repetition over every verified variant measured with energy
  (a variant's re-measurement where it has one, else its search measurement).

Usage: energy_summary.py DB...
"""
import json
import sqlite3
import sys

POINTS = """
SELECT v.id, v.params, m.kernel_ms, m.energy_j, m.power_w, m.purpose, m.id
FROM measurements m JOIN variants v ON v.id = m.variant_id
WHERE m.status = 'ok' AND m.verified = 1 AND m.energy_j IS NOT NULL AND m.cut_off = 0
ORDER BY m.id
"""


def describe(params):
    return " ".join(f"{k}={v}" for k, v in sorted(json.loads(params).items()))


def row(label, p):
    variant, params, ms, joules, watts = p[:5]
    return f"| {label} | {ms:.4f} | {joules * 1e3:.2f} | {watts:.0f} | {joules * 1e3 * ms:.3f} | {describe(params)} |"


def summarise(path):
    db = sqlite3.connect(path)
    op = db.execute("SELECT op FROM sessions LIMIT 1").fetchone()[0]
    rows = db.execute(POINTS).fetchall()
    # Per variant: its latest re-measurement, else its latest search measurement.
    latest = {}
    for r in rows:
        kept = latest.get(r[0])
        if kept is None or r[5] == "remeasure" or kept[5] != "remeasure":
            latest[r[0]] = r
    remeasured = [r for r in latest.values() if r[5] == "remeasure"]
    print(f"### {op} ({len(latest)} variants measured with energy, {len(remeasured)} re-measured)\n")
    print("| best by | kernel ms | mJ per repetition | W | edp mJ*ms | variant |")
    print("| --- | --- | --- | --- | --- | --- |")
    if remeasured:
        print(row("time", min(remeasured, key=lambda r: r[2])))
        print(row("energy", min(remeasured, key=lambda r: r[3])))
        print(row("edp", min(remeasured, key=lambda r: r[2] * r[3])))
    front = []
    for r in sorted(latest.values(), key=lambda r: (r[2], r[3])):
        if not front or r[3] < front[-1][3]:
            front.append(r)
    print(f"\nPareto front of time against energy ({len(front)} of {len(latest)} variants):\n")
    print("| kernel ms | mJ per repetition | W | variant |")
    print("| --- | --- | --- | --- |")
    for r in front:
        print(f"| {r[2]:.4f} | {r[3] * 1e3:.2f} | {r[4]:.0f} | {describe(r[1])} |")
    print()


def main():
    for path in sys.argv[1:]:
        summarise(path)


if __name__ == "__main__":
    main()
