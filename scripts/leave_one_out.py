#!/usr/bin/env python3
"""Chooses the default strategy by leave-one-out over a corpus of recorded sweeps (issue 49).

Input: one `varex tuner-bench --json FILE` per sweep (all strategies, the same seeds and budgets), e.g.
  for f in corpus/*.db; do varex tuner-bench --db $f --seeds 15 --budgets 5%,10%,20% --json out/$(basename $f .db).json; done
  scripts/leave_one_out.py out/*.json

For every sweep, the strategy is chosen on the others alone, and measured on the one held out. A strategy is
chosen first by the number of sweeps on which it costs more than random search to come within 5% of the
optimum (the issue's goal: never worse than random), then by the geometric mean of that median cost relative
to random's (a seed that never got there counts as the whole space's cost); ties go to the one whose median
best at 10% of the exhaustive cost is within 5% of the optimum on more sweeps. By the geometric mean alone,
halving won 19 of 20 folds and was worse than random on two of the PoCL sweeps. The choice on all
sweeps is the default. Prints, per held-out sweep, the strategy chosen without it and that strategy's
figures there, then the goals of issue 49 over the held-out figures.
"""
import json
import math
import os
import sys


def load(paths):
    sweeps = {}
    for path in paths:
        j = json.load(open(path))
        name = os.path.basename(path).rsplit(".", 1)[0]
        cost = {r["strategy"]: r["vs_random"] for r in j["cost_to_5pct"]}
        at10 = {r["strategy"]: r["median_ratio"] for r in j["quality"] if abs(r["budget"] - 0.10) < 1e-9}
        share = {r["strategy"]: r["share_of_exhaustive"] for r in j["cost_to_5pct"]}
        sweeps[name] = {"cost": cost, "at10": at10, "share": share}
    return sweeps


def vs_random(sweep, strategy):
    v = sweep["cost"].get(strategy)
    if v is None or not math.isfinite(v):  # never within 5%: as costly as random's whole share
        share_random = sweep["share"].get("random") or 1.0
        return 1.0 / max(share_random, 1e-9)
    return max(v, 1e-6)


def score(sweeps, names, strategy):
    ratios = [vs_random(sweeps[n], strategy) for n in names]
    worse = sum(1 for r in ratios if r > 1.0)
    within = sum(1 for n in names if (sweeps[n]["at10"].get(strategy) or math.inf) <= 1.05)
    return (worse, sum(math.log(r) for r in ratios) / len(ratios), -within)


def choose(sweeps, names):
    strategies = sorted(set.intersection(*(set(sweeps[n]["cost"]) for n in names)) - {"random"})
    return min(strategies, key=lambda s: score(sweeps, names, s))


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: leave_one_out.py BENCH.json BENCH.json [...] (one varex tuner-bench --json per sweep)")
    sweeps = load(sys.argv[1:])
    names = sorted(sweeps)
    print("| held-out sweep | chosen on the others | its cost to 5% vs random | its median best/opt at 10% |")
    print("| --- | --- | --- | --- |")
    held = []
    for n in names:
        others = [m for m in names if m != n]
        s = choose(sweeps, others)
        c, q = sweeps[n]["cost"].get(s), sweeps[n]["at10"].get(s)
        held.append((n, s, c, q))
        print(f"| {n} | {s} | {'never' if c is None else f'{c:.2f}'} | {q:.3f} |")
    default = choose(sweeps, names)
    ok_cost = sum(1 for _, _, c, _ in held if c is not None and c <= 0.5)
    trivial = sum(1 for n, _, c, _ in held if c is not None and c >= 0.999 and sweeps[n]["at10"].get("random", 9) <= 1.05)
    worse = sum(1 for _, _, c, _ in held if c is None or c > 1.0)
    within = sum(1 for _, _, _, q in held if q is not None and q <= 1.05)
    print()
    print(f"default chosen on all {len(names)} sweeps: {default}")
    print(f"held out: cost to 5% at most 0.5 of random's on {ok_cost} of {len(names)} sweeps "
          f"({trivial} more where the default is already within 5% and every strategy costs what random does); "
          f"worse than random on {worse}")
    print(f"held out: median within 5% of the optimum at 10% of the exhaustive cost on {within} of {len(names)} "
          f"sweeps ({100.0 * within / len(names):.0f}%)")


if __name__ == "__main__":
    main()
