#!/usr/bin/env python3
"""Issue 34's tables from the energy34 part's databases (scripts/gpu_evidence.sh), one per operator:

- the fastest, the most frugal and the edp best among the re-measured candidates (as `varex best --objective`
  ranks them), each with its time, energy per repetition and power;
- the Pareto front of time against energy per repetition over every verified variant measured with energy
  (a variant's re-measurement where it has one, else its search measurement).

Usage: energy_summary.py DB...
       energy_summary.py --runs LABEL RUN.json...   (the spread of `varex run --json` outputs' energy)
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


def runs(label, paths):
    """One line: each run's energy per repetition, their median and spread, the times and powers."""
    measured = [json.load(open(p)) for p in paths]
    energy = [r["energy"]["joules"] / r["energy"]["reps"] * 1e3 for r in measured]
    ms = [r["kernel_ms"] for r in measured]
    watts = [r["energy"]["joules"] / r["energy"]["seconds"] for r in measured]
    median = sorted(energy)[len(energy) // 2]
    spread = 50 * (max(energy) - min(energy)) / median
    print(f"{label}: mJ {' '.join(f'{e:.2f}' for e in energy)} (median {median:.2f}, spread +-{spread:.1f}%); "
          f"ms {min(ms):.4f}-{max(ms):.4f}; W {min(watts):.0f}-{max(watts):.0f}")


def main():
    if sys.argv[1:2] == ["--runs"]:
        runs(sys.argv[2], sys.argv[3:])
        return
    for path in sys.argv[1:]:
        summarise(path)


if __name__ == "__main__":
    main()
