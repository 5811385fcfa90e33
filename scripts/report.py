#!/usr/bin/env python3
"""Draws the plots of a varex report and writes a self-contained index.html (images inlined).

Usage: report.py DIR, where DIR holds the CSV files `varex report` wrote: devices.csv, sessions.csv,
measurements.csv, best.csv, defaults.csv. Needs matplotlib; works offline.
"""
import base64
import csv
import html
import io
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

GRID_TUNABLES = ["groups_per_cu", "work_groups", "processors", "grid"]


def read(directory, name):
    with open(os.path.join(directory, name), newline="") as f:
        return list(csv.DictReader(f))


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def figure_html(fig, title, figures):
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    figures.append((title, data))


def label(device, host, op, rows, name=""):
    return f"{device}@{host}{' (' + name + ')' if name else ''} {op} {int(rows):,} rows"


def sweep_groups(measurements, sessions):
    """The fullest sweep session per (device, host, op, rows), with its verified search measurements."""
    by_session = defaultdict(list)
    for m in measurements:
        if m["kind"] == "sweep" and m["purpose"] == "search" and m["status"] == "ok":
            by_session[m["session"]].append(m)
    best = {}
    for s in sessions:
        rows = by_session.get(s["session"], [])
        key = (s["device"], s["host"], s["op"], s["rows"], s.get("device_name", ""))
        if rows and (key not in best or len(rows) > len(best[key])):
            best[key] = rows
    return best


def heatmaps(groups, figures):
    for (device, host, op, rows, name), ms in sorted(groups.items()):
        tunables = [k[2:] for k in ms[0] if k.startswith("p_") and ms[0][k] != ""]
        grid = next((t for t in GRID_TUNABLES if t in tunables), None)
        if "local" not in tunables or grid is None:
            continue
        best = {}
        for m in ms:
            key = (m["p_local"], m["p_" + grid])
            t = num(m["kernel_ms"])
            if t is not None and (key not in best or t < best[key]):
                best[key] = t

        def order(v):
            n = num(v)
            return (0, 0) if n is None else (1, n)

        xs = sorted({k[0] for k in best}, key=order)
        ys = sorted({k[1] for k in best}, key=order)
        fastest = min(best.values())
        matrix = [[best.get((x, y), math.nan) / fastest for x in xs] for y in ys]
        fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(xs), 1.2 + 0.5 * len(ys)))
        image = ax.imshow(matrix, cmap="viridis_r", aspect="auto",
                          norm=matplotlib.colors.LogNorm(vmin=1, vmax=max(1.01, max(v for r in matrix for v in r if v == v))))
        ax.set_xticks(range(len(xs)), xs)
        ax.set_yticks(range(len(ys)), ys)
        ax.set_xlabel("local size")
        ax.set_ylabel(grid)
        for i, row in enumerate(matrix):
            for j, v in enumerate(row):
                if v == v:
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v > 1.5 else "black")
        fig.colorbar(image, ax=ax, label="best time / fastest")
        ax.set_title(f"time over local size x {grid}: {label(device, host, op, rows, name)}", fontsize=9)
        figure_html(fig, f"Heat map, {label(device, host, op, rows, name)}", figures)


def speedups(groups, defaults, figures):
    default_of = defaultdict(dict)
    for d in defaults:
        default_of[d["op"]][d["tunable"]] = d["value"]
    for (device, host, op, rows, name), ms in sorted(groups.items()):
        tunables = sorted(k[2:] for k in ms[0] if k.startswith("p_") and ms[0][k] != "")
        if not tunables:
            continue
        fig, axes = plt.subplots(1, len(tunables), figsize=(3.0 * len(tunables), 2.8), squeeze=False)
        for ax, t in zip(axes[0], tunables):
            best = {}
            for m in ms:
                v, time = m["p_" + t], num(m["kernel_ms"])
                if time is not None and (v not in best or time < best[v]):
                    best[v] = time
            reference = best.get(default_of[op].get(t)) or min(best.values())
            values = sorted(best, key=lambda v: (num(v) is None, num(v) or 0, v))
            ax.bar(range(len(values)), [reference / best[v] for v in values],
                   color=["tab:orange" if v == default_of[op].get(t) else "tab:blue" for v in values])
            ax.set_xticks(range(len(values)), values, rotation=45, fontsize=7)
            ax.axhline(1.0, color="grey", linewidth=0.8)
            ax.set_title(t, fontsize=9)
        axes[0][0].set_ylabel("speedup over the default value")
        fig.suptitle(f"best time with each value, relative to the default (orange): {label(device, host, op, rows, name)}",
                     fontsize=9)
        figure_html(fig, f"Tunable speedups, {label(device, host, op, rows, name)}", figures)


def transfers(best, figures):
    if not best:
        return
    labels = [label(b["device"], b["host"], b["op"], b["rows"], b.get("device_name", "")) for b in best]
    fig, ax = plt.subplots(figsize=(max(5, 1.3 * len(best)), 3.5))
    width = 0.27
    for k, (column, name) in enumerate([("kernel_ms", "kernel"), ("h2d_ms", "host to device"), ("d2h_ms", "device to host")]):
        ax.bar([i + (k - 1) * width for i in range(len(best))], [num(b[column]) or 0 for b in best], width, label=name)
    ax.set_yscale("log")
    ax.set_ylabel("ms")
    ax.set_xticks(range(len(best)), labels, rotation=30, ha="right", fontsize=7)
    ax.legend(fontsize=8)
    ax.set_title("kernel time of the best variant against its transfers", fontsize=9)
    figure_html(fig, "Kernel against transfer time", figures)


def convergence(measurements, sessions, figures):
    info = {s["session"]: s for s in sessions}
    curves = defaultdict(list)
    for m in measurements:
        if m["purpose"] == "search":
            curves[m["session"]].append(m)
    by_target = defaultdict(list)
    for sid, ms in curves.items():
        s = info.get(sid)
        if s and s["kind"] in ("sweep", "tune"):
            by_target[(s["device"], s["host"], s["op"], s["rows"], s.get("device_name", ""))].append((sid, s, ms))
    for key, runs in sorted(by_target.items()):
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for sid, s, ms in runs:
            ms.sort(key=lambda m: int(m["order"]))
            cost, best, xs, ys = 0.0, math.inf, [], []
            for m in ms:
                cost += num(m["cost_s"]) or 0.0
                t = num(m["kernel_ms"]) if m["status"] == "ok" else None
                if t is not None:
                    best = min(best, t)
                if best < math.inf:
                    xs.append(cost)
                    ys.append(best)
            name = f"{s['kind']} {s['strategy']}" + (f" {s['budget']}" if s["kind"] == "tune" else "") + f" (#{sid})"
            ax.step(xs, ys, where="post", label=name)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_yscale("log")
        ax.set_xlabel("cost so far (s, compilation included)")
        ax.set_ylabel("best kernel ms so far")
        ax.legend(fontsize=7)
        ax.set_title(f"tuning convergence: {label(*key)}", fontsize=9)
        figure_html(fig, f"Convergence, {label(*key)}", figures)


def bandwidth(groups, devices, figures):
    probes = {(d["device"], d["host"], d["name"]): num(d["probe_gbps"]) for d in devices}
    for (device, host, op, rows, name), ms in sorted(groups.items()):
        values = [num(m["gbps"]) for m in ms if num(m["gbps"])]
        if not values:
            continue
        fig, ax = plt.subplots(figsize=(6, 3))
        ax.hist(values, bins=40, color="tab:blue")
        probe = probes.get((device, host, name))
        if probe:
            ax.axvline(probe, color="tab:red", label=f"copy probe {probe:.1f} GB/s")
            ax.legend(fontsize=8)
        ax.set_xlabel("GB/s (operator bytes / kernel time)")
        ax.set_ylabel("variants")
        ax.set_title(f"achieved bandwidth against the probe: {label(device, host, op, rows, name)}", fontsize=9)
        figure_html(fig, f"Bandwidth, {label(device, host, op, rows, name)}", figures)


def table(rows, columns):
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r.get(c, '')))}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def main():
    directory = sys.argv[1]
    devices = read(directory, "devices.csv")
    sessions = read(directory, "sessions.csv")
    measurements = read(directory, "measurements.csv")
    best = read(directory, "best.csv")
    defaults = read(directory, "defaults.csv")
    groups = sweep_groups(measurements, sessions)
    figures = []
    heatmaps(groups, figures)
    speedups(groups, defaults, figures)
    transfers(best, figures)
    convergence(measurements, sessions, figures)
    bandwidth(groups, devices, figures)
    params = sorted(k for k in (best[0] if best else {}) if k.startswith("p_"))
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>varex report</title><style>",
        "body{font-family:sans-serif;margin:2em;max-width:1200px} table{border-collapse:collapse;font-size:12px}",
        "td,th{border:1px solid #ccc;padding:2px 6px} img{max-width:100%} h2{margin-top:2em}</style></head><body>",
        "<h1>varex report</h1>",
        f"<p>{len(devices)} devices, {len(sessions)} sessions, {len(measurements)} measurements.</p>",
        "<h2>Devices</h2>", table(devices, list(devices[0].keys()) if devices else []),
        "<h2>Best variants</h2>",
        table(best, ["device", "host", "device_name", "op", "rows", "kernel_ms", "gbps", "probe_fraction", "h2d_ms", "d2h_ms", "method"] + params),
        "<h2>Sessions</h2>",
        table(sessions, ["session", "kind", "strategy", "budget", "device", "host", "device_name", "op", "rows", "status", "evaluations",
                         "spent_s", "best_kernel_ms"]),
        "<h2>Plots</h2>",
    ]
    for title, data in figures:
        parts.append(f"<h3>{html.escape(title)}</h3><img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    with open(os.path.join(directory, "index.html"), "w") as f:
        f.write("\n".join(parts))
    print(f"{len(figures)} plots")


if __name__ == "__main__":
    main()
