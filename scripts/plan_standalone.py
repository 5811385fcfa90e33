#!/usr/bin/env python3
"""A plan tuned as a whole against the composition of its operators' stand-alone bests (issue 17).

Stand-alone, each step with kernels is tuned as a library would tune its operator: alone, on the input it
gets in the chain, by its own kernel time. For each step, every value of its tunables (`<step>.local`,
`<step>.ept`, `<step>.load`) is swept, step by step (`fuse=off`) with every other step at its defaults, and
the variant whose kernels labelled `<step>.*` take least is that step's stand-alone best. The composition
runs every step at its stand-alone best, step by step. The whole chain is tuned with `varex plan tune`
(fusion included) for --budget. Both are then measured again with the same protocol. Data resident.

Usage: scripts/plan_standalone.py --plan A --sf 1 --device cuda:0 [--budget 60s] [--db plans.db]
Prints one JSON line: each step's stand-alone best, the composed time, the tuned time and their ratio.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

KERNEL_STEPS = ("select", "arith", "join")
DEFAULTS = {"local": "256", "ept": "4", "load": "50"}


def plan_document(plan):
    """A plan file, or a shipped plan (plans/NAME.json)."""
    if not os.path.exists(plan):
        plan = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plans", plan.lower() + ".json")
    with open(plan) as f:
        return json.load(f)


def tunables_of(step):
    names = ["local", "ept"] + (["load"] if step["op"] == "join" else [])
    return [f"{step['id']}.{n}" for n in names]


def varex_json(command):
    run = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(run.stdout)


def read(directory, name):
    with open(os.path.join(directory, name), newline="") as f:
        return list(csv.DictReader(f))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--varex", default="build/varex")
    parser.add_argument("--plan", default="A")
    parser.add_argument("--sf", default="1")
    parser.add_argument("--device", required=True)
    parser.add_argument("--budget", default="60s", help="varex plan tune's budget for the whole chain")
    parser.add_argument("--db", help="varex's database (default: a temporary one)")
    args = parser.parse_args()
    document = plan_document(args.plan)
    plan_name = document["plan"]
    steps = [s for s in document["steps"] if s["op"] in KERNEL_STEPS]
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or os.path.join(tmp, "plans.db")
        common = ["--device", args.device, "--sf", str(args.sf), "--db", db, "--quiet", "--json"]
        every_default = [f"--set={t}={DEFAULTS[t.rsplit('.', 1)[1]]}" for s in steps for t in tunables_of(s)]
        standalone = {}
        for step in steps:
            mine = tunables_of(step)
            pins = [p for p in every_default if p.split("=")[1] not in mine]
            varex_json([args.varex, "plan", "sweep", args.plan, *common, "--set", "fuse=off", "--set",
                        "residency=resident", *pins])
            report = os.path.join(tmp, f"report-{step['id']}")
            # Its CSV files are what is read: a machine without matplotlib gets them and a non-zero status.
            made = subprocess.run([args.varex, "report", "--db", db, "--out", report], capture_output=True, text=True)
            if not os.path.exists(os.path.join(report, "kernels.csv")):
                sys.exit(f"varex report wrote no CSV files: {made.stderr.strip()}")
            own = {}
            for k in read(report, "kernels.csv"):
                if k["op"] == "plan" and k["kernel"].startswith(step["id"] + "."):
                    key = (k["session"], k["order"])
                    own[key] = own.get(key, 0.0) + float(k["ms"])
            best = None
            for m in read(report, "measurements.csv"):
                key = (m["session"], m["order"])
                if m["op"] != "plan" or m["status"] != "ok" or key not in own or m.get("p_fuse") != "off":
                    continue
                # A shared database may hold other plans, scale factors, devices and transferred data.
                if (m["device"] != args.device or f"plan={plan_name} " not in m["workload"] + " "
                        or float(re.search(r"sf=([0-9.e+-]+)", m["workload"]).group(1)) != float(args.sf)
                        or m.get("p_residency") != "resident"):
                    continue
                if any(m.get("p_" + t) != DEFAULTS[t.rsplit(".", 1)[1]] for s in steps if s is not step
                       for t in tunables_of(s)):
                    continue
                if best is None or own[key] < best[0]:
                    best = (own[key], {t: m["p_" + t] for t in mine})
            standalone[step["id"]] = {"kernel_ms": best[0], "params": best[1]}
        composed_set = [f"--set={t}={v}" for s in standalone.values() for t, v in s["params"].items()]
        composed = varex_json([args.varex, "plan", "run", args.plan, *common, "--set", "fuse=off", "--set",
                               "residency=resident", *composed_set])
        tuned = varex_json([args.varex, "plan", "tune", args.plan, *common, "--set", "residency=resident",
                            "--budget", args.budget])[0]
        tuned_set = [f"--set={k}={v}" for k, v in tuned["best"]["params"].items()]
        tuned_again = varex_json([args.varex, "plan", "run", args.plan, *common, *tuned_set])
        composed_ms, tuned_ms = composed["kernel_ms"], tuned_again["kernel_ms"]
        print(json.dumps({"plan": args.plan, "sf": args.sf, "device": args.device, "standalone": standalone,
                          "composed_ms": composed_ms, "tuned_params": tuned["best"]["params"],
                          "tuned_ms": tuned_ms, "composed_over_tuned": round(composed_ms / tuned_ms, 3)}))


if __name__ == "__main__":
    sys.exit(main())
