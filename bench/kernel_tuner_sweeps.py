#!/usr/bin/env python3
"""varex's recorded sweeps replayed by Kernel Tuner's strategies in simulation mode (issue 49).

Converts the exhaustive sweep of a varex database into a Kernel Tuner cache file (its `tune_params`, one
entry per recorded variant: the kernel time, the program's compile time, the rest of the evaluation as
benchmark time; failures as failed configurations; what the sweep did not record is refused by a
restriction), runs each strategy with `simulation_mode=True` over seeds, and charges each run's evaluations
in its order with varex's replay cost (tuner/replay.cpp): a variant's runs and transfers, plus its
program's compilation the first time a run meets the program (varex compiles once per program, which
Kernel Tuner's runner does not know). Prints, per strategy, the median cost until the best variant
evaluated is within 5% of the sweep's optimum, as a share of the exhaustive cost and relative to random
search's; `--varex BENCH.json` adds varex's own strategies from `varex tuner-bench --json` on the same sweep.

Needs `pip install kernel_tuner` (the bench installs it in a virtual environment of its own):
  python3 -m venv /tmp/kt && /tmp/kt/bin/pip install kernel_tuner
  /tmp/kt/bin/python bench/kernel_tuner_sweeps.py --db sweep.db --seeds 7 [--varex bench.json] [--json out.json]
"""
import argparse
import json
import math
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import warnings

STRATEGIES = ["random_sample", "genetic_algorithm", "simulated_annealing", "pso", "firefly_algorithm", "mls",
              "greedy_ils", "diff_evo", "dual_annealing", "basinhopping", "bayes_opt"]


def load_sweep(db_path):
    """The sweep's variants with varex's replay cost (tuner/replay.cpp): a variant's runs and its fixed cost (the
    wall time less its runs and the compilation it waited for; the median of the plain ones where the sweep hid
    part of a compilation), and the session's comparison in full, taken out of the row that made it and charged
    to the first evaluation of a run, as the live tuner makes it."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    session = db.execute("SELECT id, op FROM sessions WHERE kind = 'sweep' ORDER BY id LIMIT 1").fetchone()
    if not session:
        sys.exit(f"{db_path}: no sweep session")
    columns = {r[1] for r in db.execute("PRAGMA table_info(measurements)")}
    host_check = "m.host_check_ms" if "host_check_ms" in columns else "NULL"
    checked = "m.checked" if "checked" in columns else "'host'"  # before device digests: all compared in full
    rows = db.execute(
        "SELECT v.params, v.compile_key, m.status, m.kernel_ms, m.wall_ms, m.compile_ms, m.compile_cached, m.reps, "
        f"{checked}, {host_check} "
        "FROM measurements m JOIN variants v ON v.id = m.variant_id "
        "WHERE m.session_id = ? AND m.purpose = 'search' AND m.fidelity = 0 ORDER BY m.id", (session[0],)).fetchall()
    variants = {}
    compile_ms = {}
    for params, key, status, kernel_ms, wall_ms, c_ms, cached, reps, checked, check_ms in rows:
        p = json.loads(params)
        if not cached:
            compile_ms[key] = max(compile_ms.get(key, 0.0), c_ms)
        runs_ms = (reps + 2) * (kernel_ms or 0.0) if status == "ok" else 0.0
        beyond = max(0.0, (wall_ms or 0.0) - runs_ms)
        compile = 0.0 if cached else c_ms
        variants[json.dumps(p, sort_keys=True)] = {
            "params": p, "program": key, "ok": status == "ok", "time": kernel_ms if status == "ok" else None,
            "runs_ms": runs_ms, "fixed_ms": beyond - compile if beyond >= compile else None, "beyond_ms": beyond,
            "checked": checked, "check_ms": check_ms, "wall_ms": wall_ms or 0.0}
    variants = list(variants.values())
    plain = [v["fixed_ms"] for v in variants if v["ok"] and v["fixed_ms"] is not None and v["checked"] == "device"]
    plain = plain or [v["fixed_ms"] for v in variants if v["ok"] and v["fixed_ms"] is not None]
    typical = statistics.median(plain) if plain else 0.0
    check_s = 0.0
    for v in variants:
        fixed = v["fixed_ms"] if v["fixed_ms"] is not None else min(v["beyond_ms"], typical)
        if v["ok"] and v["checked"] == "host" and (v["check_ms"] is not None or plain):
            check = v["check_ms"] if v["check_ms"] is not None else max(0.0, fixed - typical)
            fixed -= check
            check_s = max(check_s, check / 1e3)
        v["run_ms"] = max(0.0, fixed) + v["runs_ms"]
    return session[1], variants, compile_ms, check_s


def kt_cache(op, variants, compile_ms, names, values):
    cache = {}
    for v in variants:
        key = ",".join(str(v["params"][n]) for n in names)
        entry = {n: v["params"][n] for n in names}
        entry.update({"compile_time": compile_ms.get(v["program"], 0.0), "verification_time": 0,
                      "benchmark_time": v["run_ms"], "strategy_time": 0, "framework_time": 0,
                      "timestamp": "2026-11-28 00:00:00"})
        if v["ok"]:
            entry["time"] = v["time"]
            entry["times"] = [v["time"]]
        else:
            entry["time"] = "RuntimeFailedConfig"
        cache[key] = entry
    return {"device_name": "varex sweep", "kernel_name": op, "problem_size": [1], "tune_params_keys": names,
            "tune_params": values, "objective": "time", "cache": cache}


def cost_to_5pct(order, by_key, optimum, check_s):
    """varex's replay cost of the evaluations in `order` until one is within 5% of the optimum."""
    compiled, cost = set(), check_s  # the first result is compared in full
    for key in order:
        v = by_key.get(key)
        if v is None:
            continue
        cost += v["run_ms"] / 1e3
        if v["program"] not in compiled:
            compiled.add(v["program"])
            cost += v["compile_s"]
        if v["ok"] and v["time"] <= 1.05 * optimum:
            return cost
    return math.inf


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--seeds", type=int, default=7)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--varex", help="varex tuner-bench --json of the same sweep")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    import numpy as np
    from kernel_tuner import tune_kernel

    op, variants, compile_ms, check_s = load_sweep(args.db)
    names = sorted({n for v in variants for n in v["params"]})
    values = {n: sorted({v["params"][n] for v in variants}, key=lambda x: (isinstance(x, str), x)) for n in names}
    by_key = {}
    for v in variants:
        v["compile_s"] = compile_ms.get(v["program"], 0.0) / 1e3
        by_key[",".join(str(v["params"][n]) for n in names)] = v
    verified = [v["time"] for v in variants if v["ok"]]
    if not verified:
        sys.exit(f"{args.db}: the sweep has no verified variant")
    optimum = min(verified)
    exhaustive_s = sum(v["wall_ms"] for v in variants) / 1e3  # what the sweep spent, as varex's replay counts it
    recorded = set(by_key)

    def restriction(p):
        return ",".join(str(p[n]) for n in names) in recorded

    fd, cache_file = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    with open(cache_file, "w") as f:
        json.dump(kt_cache(op, variants, compile_ms, names, values), f)
    out = {"db": os.path.basename(args.db), "op": op, "variants": len(variants), "exhaustive_cost_s": exhaustive_s,
           "kernel_tuner": {}}
    warnings.simplefilter("ignore")
    for strategy in args.strategies.split(","):
        costs = []
        for seed in range(1, args.seeds + 1):
            random.seed(seed)
            np.random.seed(seed)
            try:
                results, _ = tune_kernel(op, "", (1,), [], values, restrictions=restriction, cache=cache_file,
                                         simulation_mode=True, strategy=strategy,
                                         strategy_options={"max_fevals": len(variants)}, quiet=True, verbose=False)
            except Exception as e:  # a strategy that cannot run this space: said, not hidden
                print(f"{strategy}: {type(e).__name__}: {e}", file=sys.stderr)
                break
            order = [",".join(str(r[n]) for n in names) for r in results if r]
            costs.append(cost_to_5pct(order, by_key, optimum, check_s))
        if costs:
            out["kernel_tuner"][strategy] = statistics.median(costs)
    os.unlink(cache_file)
    base = out["kernel_tuner"].get("random_sample")
    print(f"{out['db']}: {op}, {len(variants)} variants, exhaustive cost {exhaustive_s:.1f} s")
    print("strategy                 median cost to 5% (s)  share of exhaustive  vs random_sample")
    rows = [(f"kernel_tuner {s}", c) for s, c in out["kernel_tuner"].items()]
    if args.varex:
        j = json.load(open(args.varex))
        out["varex"] = {r["strategy"]: r["median_cost_s"] for r in j["cost_to_5pct"]}
        rows += [(f"varex {s}", c if c is not None else math.inf) for s, c in out["varex"].items()]
    for name, c in rows:
        rel = c / base if base and math.isfinite(base) and base > 0 else math.nan
        print(f"{name:24s} {c:22.2f}  {100 * c / exhaustive_s:18.1f}%  {rel:15.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=lambda x: None)


if __name__ == "__main__":
    main()
