#!/usr/bin/env python3
"""How well a small instance ranks variants as its workload does (issue 49, goal 3).

Reads two varex databases of the same operator and device: one whose tune searched the workload at full
size, one whose tune searched a small instance of it (`varex tune --small-instance`), and compares the
variants both measured in full (not cut off), each by its fastest search measurement there: Spearman's rank
correlation, and how far the small instance's fastest of them is from the fastest at full size.

    bench/small_instance_agreement.py FULL.db SMALL.db
"""
import sqlite3
import sys


def times(db, small):
    """variant -> fastest verified, not cut off search time; of the session's workload or of another."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT m.variant_id, MIN(m.kernel_ms) FROM measurements m JOIN sessions s ON s.id = m.session_id "
        "WHERE m.status = 'ok' AND m.cut_off = 0 AND m.purpose = 'search' AND "
        + ("m.workload_id <> s.workload_id" if small else "m.workload_id = s.workload_id")
        + " GROUP BY m.variant_id").fetchall()
    return dict(rows)


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    full, small = times(sys.argv[1], False), times(sys.argv[2], True)
    common = sorted(set(full) & set(small))
    if len(common) < 3:
        print(f"{len(common)} variants measured in both: too few to compare")
        return
    f = [full[v] for v in common]
    s = [small[v] for v in common]
    pick = min(common, key=lambda v: small[v])
    print(f"{len(common)} variants measured in full in both; Spearman {spearman(f, s):.2f}; the small "
          f"instance's fastest of them is {full[pick] / min(f):.3f}x the fastest at full size")


if __name__ == "__main__":
    main()
