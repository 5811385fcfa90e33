#!/usr/bin/env python3
"""Draws the plots of a varex report and writes a self-contained index.html (images inlined).

Usage: report.py DIR, where DIR holds the CSV files `varex report` wrote: devices.csv, sessions.csv,
measurements.csv, best.csv, defaults.csv. Also writes DIR/plots.json, one entry per plot (title, kind,
target, sessions, panels), so that tests and people can check what was drawn without reading pixels.
Needs matplotlib; works offline.
"""
import base64
import csv
import html
import io
import json
import math
import os
import struct
import sys
import textwrap
from collections import defaultdict, namedtuple

import matplotlib
import numpy

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import colors, ticker  # noqa: E402
from matplotlib.text import Text  # noqa: E402

# The page is laid out for a browser about 1400 px wide. Figures are at most PAGE_INCHES wide at DPI, so
# the browser shows them at their own size and their text stays as large as the fonts below say.
DPI = 100
PAGE_INCHES = 12.8
plt.rcParams.update({
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.titlesize": 12,
})

# The tunable that sets the number of work-groups (variants/launch.hpp); the heat maps put it against the
# local size. Databases with its old names are migrated when varex opens them.
GRID_TUNABLES = ["grid"]


# --- Reading -----------------------------------------------------------------------------------------

def read(directory, name):
    with open(os.path.join(directory, name), newline="") as f:
        return list(csv.DictReader(f))


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


# What a plot is about: one device, one operator, one workload class. Sweeps that share a target are
# drawn together, one panel or one series per session.
Target = namedtuple("Target", "device host name op workload")


def target_of(row):
    return Target(row["device"], row["host"], row.get("device_name", ""), row["op"],
                  row.get("workload") or f"rows={row['rows']}")


def label(target):
    name = f" ({target.name})" if target.name else ""
    return f"{target.device}@{target.host}{name}, {target.op}, {target.workload}"


def wrapped(text, width=110):
    return "\n".join(textwrap.wrap(text, width))


def value_order(value):
    """Words (auto, cover, names) first, then numbers ascending, then counts of work-groups in all
    (grid=512wg) ascending."""
    n = num(value)
    if n is None and value.endswith("wg") and num(value[:-2]) is not None:
        return (2, num(value[:-2]), value)
    return (0, 0.0, value) if n is None else (1, n, value)


def tunable_values(measurements):
    """The values each tunable takes in `measurements`, in display order."""
    values = defaultdict(set)
    for m in measurements:
        for key, value in m.items():
            if key.startswith("p_") and value != "":
                values[key[2:]].add(value)
    return {t: sorted(vs, key=value_order) for t, vs in values.items()}


def varying(values):
    """The tunables with more than one value. A pinned tunable (a sweep restricted with --set) has
    nothing to compare, so it gets no panel."""
    return sorted(t for t, vs in values.items() if len(vs) > 1)


def sweep_groups(measurements, sessions):
    """Every sweep session with verified search measurements, grouped by target, oldest session first:
    a workload swept twice shows both sweeps."""
    by_session = defaultdict(list)
    for m in measurements:
        if (m["kind"] == "sweep" and m["purpose"] == "search" and m["status"] == "ok"
                and num(m["kernel_ms"]) is not None):
            by_session[m["session"]].append(m)
    groups = defaultdict(list)
    for s in sorted(sessions, key=lambda s: int(s["session"])):
        if by_session.get(s["session"]):
            groups[target_of(s)].append((s, by_session[s["session"]]))
    return groups


def session_name(session, measurements=None):
    """"session #3", or with its measurements "session #3 (492 variants)", and the status if unfinished."""
    text = f"session #{session['session']}"
    if measurements is not None:
        status = "" if session["status"] == "finished" else f", {session['status']}"
        text += f" ({len(measurements)} variants{status})"
    return text


# --- Number formats ----------------------------------------------------------------------------------

def significant(value, digits=4):
    """Plain decimal notation with `digits` significant digits (never an exponent): 0.02603, 4.747, 1235."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def tick_label(value, _position=None):
    """A tick label in plain decimals, trailing zeros dropped: 0.005, 0.02, 1, 2.5, 1,000."""
    if value == 0:
        return "0"
    text = significant(value, 3)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{float(text):,.0f}" if abs(value) >= 1000 else text


def plain_log_axis(axis):
    """Ticks in plain decimals on a log axis instead of matplotlib's 2×10^0: 1, 2, 5 per decade over a
    few decades, evenly spaced ticks when the data spans less than one, decades when it spans many."""
    low, high = sorted(axis.get_view_interval())
    decades = math.log10(high / low) if low > 0 else 99
    if decades < 1:
        axis.set_major_locator(ticker.MaxNLocator(6, steps=[1, 2, 2.5, 5, 10]))
    elif decades <= 3:
        axis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    else:
        axis.set_major_locator(ticker.LogLocator(base=10))
    axis.set_major_formatter(ticker.FuncFormatter(tick_label))
    axis.set_minor_formatter(ticker.NullFormatter())


def plain_axis(axis):
    axis.set_major_formatter(ticker.FuncFormatter(tick_label))
    axis.set_minor_formatter(ticker.NullFormatter())


# --- Plots -------------------------------------------------------------------------------------------

class Figures:
    """The drawn figures, as inlined PNGs for the page and entries for plots.json: what each shows
    (kind, target, sessions, panels) and what makes it legible (its tick labels, its smallest text, its
    size in pixels, which the page shows unscaled up to about 1300 px)."""

    def __init__(self):
        self.items = []

    def add(self, fig, title, kind, target=None, sessions=(), panels=(), **shown):
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")  # draws: tick labels are final now
        png = buffer.getvalue()
        width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR chunk
        entry = {"title": title, "kind": kind, "sessions": [int(s) for s in sessions], "panels": list(panels),
                 "tick_labels": tick_labels(fig), "smallest_font_pt": smallest_font(fig),
                 "width_px": width, "height_px": height}
        if target is not None:
            entry["target"] = target._asdict()
        entry.update(shown)  # what a plot of this kind shows, for the tests: its axis range, its marks
        plt.close(fig)
        self.items.append((entry, base64.b64encode(png).decode("ascii")))


def tick_labels(fig):
    return [t.get_text() for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
            for t in axis.get_ticklabels(which="both") if t.get_text()]


def smallest_font(fig):
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes, default=0)


def fastest_per_cell(measurements, x_tunable, y_tunable):
    best = {}
    for m in measurements:
        key = (m.get("p_" + x_tunable, ""), m.get("p_" + y_tunable, ""))
        t = num(m["kernel_ms"])
        if key[0] != "" and key[1] != "" and (key not in best or t < best[key]):
            best[key] = t
    return best


def ratio_ticks(high):
    """Colour bar ticks for time / fastest from 1 to `high`, at most about six of them."""
    if high <= 1.5:
        steps = [1, 1.1, 1.2, 1.3, 1.4, 1.5]
    else:
        steps = [1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000]
    ticks = [t for t in steps if t <= high]
    while len(ticks) > 6:
        ticks = ticks[::2]
    return ticks


def heatmap_panel(ax, matrix, xs, ys, norm, x_title, y_title):
    ax.set_facecolor("0.9")  # combinations the space does not allow
    image = ax.imshow(matrix, cmap="viridis_r", aspect="auto", norm=norm)
    ax.set_xticks(range(len(xs)), xs)
    ax.set_yticks(range(len(ys)), ys)
    ax.set_xlabel(x_title)
    ax.set_ylabel(y_title)
    for i, row in enumerate(matrix):
        for j, v in enumerate(row):
            if v == v:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=9,
                        color="white" if norm(v) > 0.55 else "black")
    return image


def heatmaps(groups, figures):
    """Best time over local size × grid, one panel per sweep session, on one colour scale: each cell's
    best time over the other tunables, relative to the fastest cell of all panels."""
    for target, runs in sorted(groups.items()):
        values = tunable_values(m for _, ms in runs for m in ms)
        grid = next((t for t in GRID_TUNABLES if len(values.get(t, ())) > 1), None)
        if grid is None or len(values.get("local", ())) < 2:
            continue
        xs, ys = values["local"], values[grid]
        cells = [fastest_per_cell(ms, "local", grid) for _, ms in runs]
        fastest = min(min(c.values()) for c in cells if c)
        matrices = [[[c.get((x, y), math.nan) / fastest for x in xs] for y in ys] for c in cells]
        worst = max(v for matrix in matrices for row in matrix for v in row if v == v)
        norm = colors.LogNorm(vmin=1, vmax=max(1.01, worst))
        # Panels side by side as far as the page's width allows (the colour bar takes about 1.2 in).
        panel_width, panel_height = 1.0 + 0.5 * len(xs), 1.4 + 0.45 * len(ys)
        columns = max(1, min(len(runs), int((PAGE_INCHES - 1.2) // panel_width)))
        rows = math.ceil(len(runs) / columns)
        fig, axes = plt.subplots(rows, columns, figsize=(columns * panel_width + 1.2, rows * panel_height + 0.6),
                                 squeeze=False, constrained_layout=True)
        for ax, (session, ms), matrix in zip(axes.flat, runs, matrices):
            image = heatmap_panel(ax, matrix, xs, ys, norm, "local size", grid)
            ax.set_title(session_name(session, ms))
        for ax in axes.flat[len(runs):]:
            ax.remove()
        bar = fig.colorbar(image, ax=list(axes.flat[:len(runs)]), label="best time / fastest",
                           ticks=ratio_ticks(norm.vmax))
        bar.ax.yaxis.set_major_formatter(ticker.FuncFormatter(tick_label))
        bar.ax.minorticks_off()
        fig.suptitle(wrapped(f"best time over local size × {grid}: {label(target)}"))
        figures.add(fig, f"Heat map, {label(target)}", "heatmap", target, [s["session"] for s, _ in runs],
                    [session_name(s) for s, _ in runs])


def fastest_per_value(measurements, tunable):
    best = {}
    for m in measurements:
        v, t = m.get("p_" + tunable, ""), num(m["kernel_ms"])
        if v != "" and (v not in best or t < best[v]):
            best[v] = t
    return best


def speedup_panel(ax, tunable, values, runs, default):
    """Per value, the best time with it relative to the best time with the default value (or, where the
    default was not measured, the fastest value), one bar per session."""
    width = 0.8 / len(runs)
    for k, (session, ms) in enumerate(runs):
        best = fastest_per_value(ms, tunable)
        if not best:
            continue
        reference = best.get(default) or min(best.values())
        xs = [i for i, v in enumerate(values) if v in best]
        ax.bar([x + (k - (len(runs) - 1) / 2) * width for x in xs],
               [reference / best[values[x]] for x in xs], width, color=f"C{k}", label=session_name(session))
    ax.set_xticks(range(len(values)), [f"{v}\n(default)" if v == default else v for v in values],
                  rotation=0 if sum(len(v) for v in values) < 36 else 35)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    plain_axis(ax.yaxis)
    ax.set_title(tunable if default in values else f"{tunable} (relative to the fastest value)")


def speedups(groups, defaults, figures):
    """One panel per tunable that varies in the sweeps of a target; pinned tunables have none."""
    default_of = defaultdict(dict)
    for d in defaults:
        default_of[d["op"]][d["tunable"]] = d["value"]
    for target, runs in sorted(groups.items()):
        values = tunable_values(m for _, ms in runs for m in ms)
        shown = varying(values)
        if not shown:
            continue
        columns = min(3, len(shown))
        rows = math.ceil(len(shown) / columns)
        fig, axes = plt.subplots(rows, columns, figsize=(PAGE_INCHES, 3.3 * rows + 0.8), squeeze=False,
                                 constrained_layout=True)
        for ax, t in zip(axes.flat, shown):
            speedup_panel(ax, t, values[t], runs, default_of[target.op].get(t))
        for ax in axes.flat[len(shown):]:
            ax.remove()
        for row in axes:
            row[0].set_ylabel("speedup over default")
        if len(runs) > 1:  # below the panels, where it hides no bar (the saved image grows to hold it)
            handles, names = axes[0][0].get_legend_handles_labels()
            fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0), ncols=len(runs))
        fig.suptitle(wrapped(f"best time with each value, relative to the default value: {label(target)}"))
        figures.add(fig, f"Tunable speedups, {label(target)}", "speedups", target,
                    [s["session"] for s, _ in runs], shown)


def pareto_front(points):
    """The points no other point beats in both time and energy, fastest first: sorted by time, each kept when it
    costs less energy than every faster one."""
    front = []
    for t, e in sorted(points):
        if not front or e < front[-1][1]:
            front.append((t, e))
    return front


def energy(measurements, sessions, figures):
    """Time against energy of every verified variant of a workload whose energy was measured (--energy-ms),
    one plot per device and workload, the Pareto front marked: the variants no other is both faster and
    more frugal than."""
    by_target = defaultdict(list)
    names = {s["session"]: s for s in sessions}
    for m in measurements:
        if (m["purpose"] == "search" and m["status"] == "ok" and m["cut_off"] != "1"
                and num(m["kernel_ms"]) is not None and num(m["energy_mj"]) is not None
                and m["session"] in names):
            by_target[target_of(names[m["session"]])].append(m)
    for target, ms in sorted(by_target.items()):
        points = [(num(m["kernel_ms"]), num(m["energy_mj"])) for m in ms]
        front = pareto_front(points)
        fig, ax = plt.subplots(figsize=(8.5, 5.0), constrained_layout=True)
        ax.scatter([t for t, _ in points], [e for _, e in points], s=14, color="C0", alpha=0.6,
                   label=f"{len(points)} measured variants")
        ax.plot([t for t, _ in front], [e for _, e in front], "-o", color="tab:red", markersize=5,
                drawstyle="steps-post", label=f"Pareto front ({len(front)}: none faster and more frugal)")
        fastest, frugal = front[0], min(front, key=lambda p: p[1])
        ax.annotate("fastest", fastest, textcoords="offset points", xytext=(6, 6))
        if frugal != fastest:
            ax.annotate("most frugal", frugal, textcoords="offset points", xytext=(6, -12))
        ax.legend(loc="upper right")
        plain_axis(ax.xaxis)
        plain_axis(ax.yaxis)
        ax.set_xlabel("kernel time (ms, median)")
        ax.set_ylabel("energy per repetition (mJ)")
        ax.set_title(wrapped(f"time against energy: {label(target)}", 90))
        figures.add(fig, f"Energy, {label(target)}", "energy", target, sorted({m["session"] for m in ms}),
                    front=[list(p) for p in front], points=len(points))


def bandwidth(groups, devices, figures):
    """The achieved bandwidth of every verified variant, one histogram per sweep session."""
    probes = {(d["device"], d["host"], d["name"]): num(d["probe_gbps"]) for d in devices}
    for target, runs in sorted(groups.items()):
        series = [(s, [num(m["gbps"]) for m in ms if num(m["gbps"])]) for s, ms in runs]
        series = [(s, v) for s, v in series if v]
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(10.5, 3.8), constrained_layout=True)
        # One set of bins for all, over the range where the variants are (a few far outliers, a variant timed
        # on nothing at 0.1 GB/s, once squashed every other bar into one): the outliers land in the end bins.
        everything = [v for _, values in series for v in values]
        low, high = numpy.percentile(everything, [1, 99])
        if high <= low:
            low, high = min(everything), max(everything) + 1e-9
        bins = numpy.linspace(low, high, 41)
        series = [(session, numpy.clip(values, low, high)) for session, values in series]
        for k, (session, values) in enumerate(series):
            ax.hist(values, bins=bins, histtype="step", linewidth=1.8, color=f"C{k}", label=session_name(session))
        probe = probes.get((target.device, target.host, target.name))
        if probe and probe <= 2 * high:
            ax.axvline(probe, color="tab:red", linestyle="--", label=f"copy probe {probe:.1f} GB/s")
        elif probe:
            # Drawn at its place, a probe far past every variant would squash all the bars against the axis.
            best = max(v for v in everything)
            ax.plot([], [], " ", label=f"copy probe {probe:.1f} GB/s: off this scale\n(the best variant reaches {100 * best / probe:.1f}% of it)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the axes: it hides no bar nor the probe
        plain_axis(ax.xaxis)
        ax.set_xlabel("GB/s (operator bytes / kernel time)")
        ax.set_ylabel("variants")
        ax.set_title(wrapped(f"achieved bandwidth against the probe: {label(target)}", 90))
        figures.add(fig, f"Bandwidth, {label(target)}", "bandwidth", target, [s["session"] for s, _ in series],
                    [session_name(s) for s, _ in series], x_limits=list(ax.get_xlim()), bins=[low, high])


def best_label(b):
    return "\n".join([f"{b['device']}@{b['host']}", b["op"]] + textwrap.wrap(b.get("workload", ""), 24))


def transfers(best, figures):
    """The best variants' kernel time against their transfers, at most eight variants per figure."""
    chunks = [best[i:i + 8] for i in range(0, len(best), 8)]
    for n, chunk in enumerate(chunks):
        fig, ax = plt.subplots(figsize=(min(PAGE_INCHES, 3 + 1.4 * len(chunk)), 4.5), constrained_layout=True)
        width = 0.27
        for k, (column, name) in enumerate([("kernel_ms", "kernel"), ("h2d_ms", "host to device"),
                                            ("d2h_ms", "device to host")]):
            ax.bar([i + (k - 1) * width for i in range(len(chunk))], [num(b[column]) or 0 for b in chunk], width,
                   label=name)
        ax.set_yscale("log")
        plain_log_axis(ax.yaxis)
        ax.set_ylabel("ms")
        ax.set_xticks(range(len(chunk)), [best_label(b) for b in chunk], fontsize=9)
        ax.legend()
        ax.set_title("kernel time of the best variant against its transfers")
        part = f" ({n + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        figures.add(fig, f"Kernel against transfer time{part}", "transfers")


# How a plan's measured time splits (docs/PLANS.md): its kernels, its transfers and the gaps between them.
BREAKDOWN_PARTS = [("kernels", "kernels"), ("transfers", "transfers (h2d, d2h)"), ("launch", "launches and gaps")]


def breakdown_part(label):
    if label in ("h2d", "d2h"):
        return "transfers"
    return "launch" if label == "launch" else "kernels"


def breakdown(measurements, kernels, figures):
    """Plans: for each workload, the fastest verified variant per device with resident and with transferred
    data, its time stacked as kernels, transfers and launches (the source's figures 16-17)."""
    parts = defaultdict(lambda: defaultdict(float))
    for k in kernels:
        if k["op"] == "plan":
            parts[(k["session"], k["order"])][breakdown_part(k["kernel"])] += num(k["ms"]) or 0
    fastest = {}
    for m in measurements:
        if m["op"] != "plan" or m["status"] != "ok" or (m["session"], m["order"]) not in parts:
            continue
        key = (m["workload"], f"{m['device']}@{m['host']}", m.get("p_residency", ""))
        if key not in fastest or num(m["kernel_ms"]) < num(fastest[key]["kernel_ms"]):
            fastest[key] = m
    for workload in sorted({k[0] for k in fastest}):
        bars = sorted((k, m) for k, m in fastest.items() if k[0] == workload)
        fig, ax = plt.subplots(figsize=(min(PAGE_INCHES, 3 + 1.2 * len(bars)), 4.5), constrained_layout=True)
        bottom = [0.0] * len(bars)
        for part, name in BREAKDOWN_PARTS:
            heights = [parts[(m["session"], m["order"])][part] for _, m in bars]
            ax.bar(range(len(bars)), heights, 0.6, bottom=bottom, label=name)
            bottom = [b + h for b, h in zip(bottom, heights)]
        ax.set_ylabel("ms")
        ax.set_xticks(range(len(bars)),
                      [f"{device}\n{residency}\nfuse={m.get('p_fuse', '')}" for (_, device, residency), m in bars],
                      fontsize=9)
        ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.set_title("\n".join(textwrap.wrap(f"plan {workload}: the fastest variant's time", 80)))
        figures.add(fig, f"Plan breakdown: {workload}", "breakdown",
                    sessions=sorted({int(m["session"]) for _, m in bars}))


def convergence_curve(measurements):
    """Cost so far (s) and best kernel ms so far after each measurement with a verified time."""
    cost, best, xs, ys = 0.0, math.inf, [], []
    for m in sorted(measurements, key=lambda m: int(m["order"])):
        cost += num(m["cost_s"]) or 0.0
        t = num(m["kernel_ms"]) if m["status"] == "ok" else None
        if t is not None:
            best = min(best, t)
        if best < math.inf:
            xs.append(cost)
            ys.append(best)
    return xs, ys


def convergence(measurements, sessions, figures):
    """Best time found against the cost spent, every sweep and tuning session of a target."""
    info = {s["session"]: s for s in sessions}
    searched = defaultdict(list)
    for m in measurements:
        if m["purpose"] == "search":
            searched[m["session"]].append(m)
    by_target = defaultdict(list)
    for sid, ms in sorted(searched.items(), key=lambda item: int(item[0])):
        s = info.get(sid)
        if s and s["kind"] in ("sweep", "tune"):
            by_target[target_of(s)].append((s, ms))
    for target, runs in sorted(by_target.items()):
        fig, ax = plt.subplots(figsize=(9, 4), constrained_layout=True)
        drawn, declared_marks = [], {}
        for s, ms in runs:
            xs, ys = convergence_curve(ms)
            if not xs:
                continue
            budget = f" {s['budget']}" if s["kind"] == "tune" else ""
            name = f"{s['kind']} {s['strategy']}{budget} (#{s['session']})"
            line = ax.step(xs, ys, where="post", linewidth=1.8, label=name)[0]
            # The declared best is the re-measured one (the tables' figure): a single search sample can be
            # faster or slower than its variant's re-measurement, so it is marked where the session ended.
            declared = num(s.get("best_kernel_ms"))
            if declared:
                ax.plot([num(s.get("spent_s")) or xs[-1]], [declared], marker="D", markersize=7,
                        color=line.get_color(), linestyle="none",
                        label=f"#{s['session']} declared best, re-measured: {declared:.4g} ms")
                declared_marks[s["session"]] = declared
            drawn.append(s["session"])
        if not drawn:
            plt.close(fig)
            continue
        ax.set_xscale("symlog", linthresh=1)
        ax.set_yscale("log")
        plain_axis(ax.xaxis)
        plain_log_axis(ax.yaxis)
        ax.set_xlabel("cost so far (s, compilation included)")
        ax.set_ylabel("fastest search sample so far (ms)")
        ax.legend()
        ax.set_title(wrapped(f"tuning convergence: {label(target)}", 90))
        figures.add(fig, f"Convergence, {label(target)}", "convergence", target, drawn, declared_ms=declared_marks)


# --- The page ----------------------------------------------------------------------------------------

# A table column: its heading, the text of its cell for a row, and how the cell is set: "text", "num"
# (right-aligned, never broken) or "long" (free text that wraps within a set width).
Column = namedtuple("Column", "title cell kind")


def field(name, title=None, kind="text", fmt=None):
    """The column of CSV field `name`; `fmt` turns a number into its text."""
    def cell(row):
        text = row.get(name, "")
        value = num(text)
        return fmt(value) if fmt and value is not None else text
    return Column(title or name, cell, kind)


def number_field(name, title, fmt=None):
    return field(name, title, "num", fmt)


def ms4(v):
    return significant(v, 4)


def device_cell(row):
    name = row.get("device_name") or row.get("name") or ""
    return f"{row['device']}@{row['host']}" + (f"\n{name}" if name else "")


def breakable(text):
    """Lets a squeezed column break a heading like match_ratio after its underscores, and nowhere else."""
    return text.replace("_", "_<wbr>")


def table(rows, columns, css, attributes=""):
    """An HTML table with the columns that have a value in at least one row: a column that is empty in
    every row (another operator's tunable, say) only takes width."""
    shown = [c for c in columns if any(c.cell(r) != "" for r in rows)]

    def td(column, row):
        text = html.escape(column.cell(row)).replace("\n", "<br>")
        return f"<td class='{column.kind}'>{text}</td>"

    head = "".join(f"<th>{breakable(html.escape(c.title))}</th>" for c in shown)
    body = "".join("<tr>" + "".join(td(c, r) for c in shown) + "</tr>" for r in rows)
    return f"<table class='{css}'{attributes}><tr>{head}</tr>{body}</table>"


OBJECTIVES = ["time", "energy", "edp"]


def probe_cell(row):
    """The best's share of the copy probe; where its operator may move fewer bytes than it counts (a string
    comparison stops at the first mismatch), that share is no bound."""
    value = num(row.get("probe_fraction", ""))
    if value is None:
        return ""
    return f"{100 * value:.1f}%" + (" (no bound)" if row.get("probe_bound") == "no" else "")


def best_tables(best):
    """One table per operator and objective, since each operator has its own tunables: the fastest variants
    first, then the most frugal ones (by energy, and by energy x time) where measurements carry energy."""
    common = [
        Column("device", device_cell, "long"),
        field("workload", kind="long"),
        number_field("kernel_ms", "kernel ms", ms4),
        number_field("gbps", "GB/s", lambda v: f"{v:.1f}"),
        Column("of probe", probe_cell, "num"),
        number_field("energy_mj", "mJ", ms4),
        number_field("power_w", "W", lambda v: f"{v:.0f}"),
        number_field("h2d_ms", "h2d ms", ms4),
        number_field("d2h_ms", "d2h ms", ms4),
        field("method"),
        number_field("session", "session"),
    ]
    by_target = defaultdict(list)
    for b in best:
        by_target[(b["op"], b.get("objective") or "time")].append(b)
    parts = []
    for (op, objective), rows in sorted(by_target.items(), key=lambda i: (i[0][0], OBJECTIVES.index(i[0][1]))):
        params = sorted(k for k in rows[0] if k.startswith("p_"))
        columns = common + [field(p, p[2:]) for p in params]
        by = "" if objective == "time" else f", best by {objective}"
        parts.append(f"<h3>{html.escape(op + by)}</h3>")
        parts.append(table(rows, columns, "best",
                           f" data-op='{html.escape(op)}' data-objective='{html.escape(objective)}'"))
    return parts


def devices_table(devices):
    return table(devices, [
        Column("device", lambda d: f"{d['device']}@{d['host']}", "text"),
        field("name"), field("backend"), field("vendor"), field("type"), field("arch"),
        number_field("compute_units", "CUs"),
        number_field("global_mem", "memory GiB", lambda v: f"{v / 2**30:.1f}"),
        number_field("cache_bytes", "cache MiB", lambda v: f"{v / 2**20:.1f}"),
        number_field("probe_gbps", "probe GB/s", lambda v: f"{v:.1f}"),
    ], "devices")


# The page lists the latest sessions only: a series of 18 sizes over 11 operators and 3 devices is 600 of them,
# a page 40,000 px tall before its plots (sessions.csv has every one).
SESSIONS_SHOWN = 100


def sessions_table(sessions):
    shown = sorted(sessions, key=lambda s: int(s["session"]))[-SESSIONS_SHOWN:]
    note = ("" if len(shown) == len(sessions) else
            f"<p>The latest {len(shown)} of {len(sessions)} sessions; sessions.csv has every one.</p>")
    return note + table(shown, [
        number_field("session", "session"), field("kind"), field("strategy"), field("budget"),
        Column("device", device_cell, "long"), field("op"), field("workload", kind="long"), field("status"),
        number_field("evaluations", "evaluations"),
        number_field("spent_s", "spent s", lambda v: f"{v:.1f}"),
        number_field("best_kernel_ms", "best kernel ms", ms4),
    ], "sessions")


STYLE = """
body{font-family:sans-serif;margin:1.5em auto;padding:0 16px;max-width:1320px;color:#222}
table{border-collapse:collapse;font-size:13px;margin-bottom:1em}
td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}
th{background:#f2f2f2;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.long{min-width:8em;max-width:15em}
img{max-width:100%;height:auto}
h2{margin-top:1.6em} h3{font-size:15px;margin:1.4em 0 0.4em}
"""


# --- Series: time against the input's size or selectivity, as the sources draw it -----------------------

SERIES_AXES = [("rows", "rows", True), ("selectivity", "selectivity", False)]
SERIES_LINES = [("best", "best own variant, re-measured", "-"), ("default", "source default", "--"),
                ("vendor", "vendor library (impl=cub)", ":")]


def workload_of(session):
    try:
        return json.loads(session.get("workload_json") or "{}")
    except ValueError:
        return {}


def follows(params, axis, name, points):
    """How parameter `name` goes along a series over `axis`: "same" where every point has one value, "scaled"
    where it is the same multiple of the axis at every point (a join's right side, a relation's distinct
    keys: their defaults follow --rows), else None."""
    values = [params[s].get(name) for s in points]  # a session of an older version may lack a parameter
    if len({json.dumps(v) for v in values}) == 1:
        return "same"
    try:
        ratios = {float(params[s].get(name)) / float(params[s][axis]) for s in points}
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return "scaled" if len(ratios) == 1 else None


def split_series(axis, params, sessions):
    """Sessions of one op, device and generator, split into series over `axis`: every other parameter the
    same along a series, or the same multiple of the axis."""
    groups = [sessions]
    names = sorted({k for s in sessions for k in params[s] if k != axis})
    for name in names:
        refined = []
        for group in groups:
            if follows(params, axis, name, group):
                refined.append(group)
                continue
            # Each point goes with the series that explains more points: the parameter's value fixed, or its
            # ratio to the axis (a join against a fixed right side, and one whose right side grows with it).
            value_of, ratio_of = {}, {}
            for s in group:
                value = params[s].get(name)
                value_of[s] = json.dumps(value)
                try:
                    ratio_of[s] = round(float(value) / float(params[s][axis]), 9)
                except (TypeError, ValueError, ZeroDivisionError):
                    ratio_of[s] = value_of[s]

            def span(key_of, s, group=group):
                return len({params[t][axis] for t in group if key_of[t] == key_of[s]})
            split = defaultdict(list)
            for s in group:
                by_ratio = span(ratio_of, s) > span(value_of, s)
                split[("ratio", ratio_of[s]) if by_ratio else ("value", value_of[s])].append(s)
            refined.extend(split.values())
        groups = refined
    return groups


def find_series(sessions):
    """Workloads recorded on one device that differ only in their rows (or only in their selectivity), with the
    other parameters the same or following the rows (a join's right side), at least two of them, whatever
    command recorded them: {(axis, op, device, host, shape, query): {value: [session]}}. Where each value has
    one query, it is one series whatever the query (a selection's bounds follow from its selectivity: query
    None); where a value has several (two string patterns at each selectivity), each query is a series of its
    own."""
    candidates = defaultdict(list)
    params = {}
    for s in sessions:
        w = workload_of(s)
        params[s["session"]] = w.get("params", {})
        for axis, _, _ in SERIES_AXES:
            if axis in params[s["session"]]:
                candidates[(axis, s["op"], s["device"], s["host"], json.dumps(w.get("generator")))].append(s)
    found = {}
    for (axis, op, device, host, generator), ss in candidates.items():
        by_id = {s["session"]: s for s in ss}
        for group in split_series(axis, params, list(by_id)):
            first = params[group[0]]
            names = sorted({k for sid in group for k in params[sid] if k != axis})
            shape = json.dumps([json.loads(generator), {k: (first.get(k) if follows(params, axis, k, group) == "same"
                                                            else "follows " + axis) for k in names}], sort_keys=True)
            points = defaultdict(list)
            for sid in group:
                points[params[sid][axis]].append(by_id[sid])
            found[(axis, op, device, host, shape)] = points
    out = {}
    for key, points in found.items():
        query_of = {s["session"]: json.dumps(workload_of(s).get("query"), sort_keys=True)
                    for ss in points.values() for s in ss}
        if all(len({query_of[s["session"]] for s in ss}) == 1 for ss in points.values()):
            groups = {None: points}
        else:
            groups = defaultdict(lambda: defaultdict(list))
            for value, ss in points.items():
                for s in ss:
                    groups[query_of[s["session"]]][value].append(s)
        for query, series_points in groups.items():
            if len(series_points) >= 2:
                out[key + (query,)] = series_points
    return out


def query_text(query):
    """A series' query in its title: "pattern=%a quasiperiodic tiling%", at most 60 characters."""
    if query is None:
        return ""
    text = ", ".join(f"{k}={v}" for k, v in (json.loads(query) or {}).items())
    return text if len(text) <= 60 else text[:57] + "..."


def is_default(m, defaults_of_op):
    return bool(defaults_of_op) and all(m.get(f"p_{t}", v) == v for t, v in defaults_of_op.items())


def remeasured_best(ms):
    """`varex best`'s pick among one workload's measurements: per variant the median (the lower middle one)
    of its re-measurements, and the lowest of those; None where none was measured again."""
    by_variant = defaultdict(list)
    for m in ms:
        if m["purpose"] == "remeasure":
            by_variant[m["variant"]].append(m)
    medians = [sorted(found, key=lambda m: num(m["kernel_ms"]))[(len(found) - 1) // 2]
               for found in by_variant.values()]
    return min(medians, key=lambda m: num(m["kernel_ms"])) if medians else None


def series_point(ms, defaults_of_op):
    """The verified measurements of one workload: the best own, the source default's and the vendor's, each
    as `varex best` would name it, by its re-measurements (a search sample is one noisy repetition: the
    fastest of many is luck, not the best). A workload only run (`varex run`, never re-measured) shows its
    run's measurement; the default and the vendor, where not measured again, their fastest sample. A variant
    a tune cut off (timed once, never best) is left out, as `varex best` leaves it out."""
    ok = [m for m in ms if m["status"] == "ok" and m["verified"] == "1" and m["cut_off"] != "1"
          and num(m["kernel_ms"])]
    own = [m for m in ok if m.get("p_impl", "own") in ("", "own")]
    picks = {"best": own, "default": [m for m in own if is_default(m, defaults_of_op)],
             "vendor": [m for m in ok if m.get("p_impl") == "cub"]}
    point = {}
    for kind, found in picks.items():
        runs = [m for m in found if m["kind"] == "run"]
        fallback = runs if kind == "best" else found
        chosen = remeasured_best(found) or min(fallback, key=lambda m: num(m["kernel_ms"]), default=None)
        if chosen:
            point[kind] = chosen
    return point


def series(sessions, measurements, defaults, figures):
    """Per series: kernel time and GB/s against the axis (best own, source default, vendor), and for a series
    over rows the best variant's kernel, upload and download times stacked, as the sources' bars."""
    by_session = defaultdict(list)
    for m in measurements:
        by_session[m["session"]].append(m)
    defaults_by_op = defaultdict(dict)
    for d in defaults:
        defaults_by_op[d["op"]][d["tunable"]] = d["value"]
    grouped = defaultdict(dict)  # (axis, op, shape, query) -> {(device, host): {value: point}}
    for (axis, op, device, host, shape, query), points in find_series(sessions).items():
        line = {}
        for value, ss in points.items():
            point = series_point([m for s in ss for m in by_session[s["session"]]], defaults_by_op[op])
            if point:
                line[value] = point
        if len(line) >= 2:
            grouped[(axis, op, shape, query)][(device, host)] = line
    for (axis, op, shape, query), devices in sorted(grouped.items(), key=lambda item: str(item[0])):
        title_axis = dict((a, t) for a, t, _ in SERIES_AXES)[axis]
        log_x = dict((a, lg) for a, _, lg in SERIES_AXES)[axis]
        rest = json.loads(shape)[1]
        # What the series is of: the generator or data set, and its query where the series has its own.
        # and the other axis's value, which tells two series of one operator apart.
        other = {"rows": "selectivity", "selectivity": "rows"}[axis]
        # A second relation's size too: fixed, or following the rows (two series of a join apart).
        second = rest.get("rows2")
        second = "" if second is None else "rows2 " + (second if isinstance(second, str) else tick_label(second))
        what = ", ".join(x for x in [str(rest.get("dataset") or json.loads(shape)[0]), query_text(query),
                                     f"{other} {tick_label(rest[other])}" if other in rest else "", second] if x)
        fig, (left, right) = plt.subplots(1, 2, figsize=(PAGE_INCHES, 4.6), constrained_layout=True)
        drawn = []
        lines = {}  # label -> [[x, kernel ms], ...], what was drawn, for the tests
        for k, ((device, host), line) in enumerate(sorted(devices.items())):
            xs = sorted(line)
            for kind, name, style in SERIES_LINES:
                pts = [(x, line[x][kind]) for x in xs if kind in line[x]]
                if not pts:
                    continue
                label_text = f"{device}@{host}: {name}"
                lines[label_text] = [[x, num(m["kernel_ms"])] for x, m in pts]
                left.plot([x for x, _ in pts], [num(m["kernel_ms"]) for _, m in pts], style, marker="o",
                          color=f"C{k}", label=label_text)
                right.plot([x for x, _ in pts], [num(m["gbps"]) or 0 for _, m in pts], style, marker="o",
                           color=f"C{k}", label=label_text)
                drawn.append(label_text)
        for ax, quantity in ((left, "kernel ms"), (right, "GB/s")):
            ax.set_xlabel(title_axis)
            ax.set_ylabel(quantity)
            if log_x:
                ax.set_xscale("log", base=2)
            else:
                ax.set_xscale("log")
            plain_log_axis(ax.xaxis)
            ax.tick_params(axis="x", labelrotation=30)  # 1,000,000 and 10,000,000 side by side overlap
        left.set_yscale("log")
        plain_log_axis(left.yaxis)
        plain_axis(right.yaxis)
        right.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
        fig.suptitle(wrapped(f"{op} ({what}) against {title_axis}", 100))
        figures.add(fig, f"Series: {op} ({what}) against {title_axis}", "series",
                    panels=drawn, axis=axis, op=op, points=sorted({x for line in devices.values() for x in line}),
                    lines=lines)
        if axis != "rows":
            continue
        fig, axes = plt.subplots(1, len(devices), figsize=(min(PAGE_INCHES, 1 + 4.2 * len(devices)), 4.2),
                                 constrained_layout=True, squeeze=False)
        for ax, ((device, host), line) in zip(axes[0], sorted(devices.items())):
            xs = sorted(line)
            bottom = numpy.zeros(len(xs))
            for column, name in (("kernel_ms", "kernel"), ("h2d_ms", "host to device"), ("d2h_ms", "device to host")):
                heights = numpy.array([(num(line[x]["best"][column]) or 0) if "best" in line[x] else 0 for x in xs])
                ax.bar(range(len(xs)), heights, bottom=bottom, label=name)
                bottom += heights
            ax.set_xticks(range(len(xs)), [tick_label(x) for x in xs], rotation=45, fontsize=9)
            ax.set_xlabel("rows")
            ax.set_ylabel("ms")
            ax.set_title(f"{device}@{host}", fontsize=10)
        axes[0][-1].legend(loc="upper left", fontsize=9)
        fig.suptitle(wrapped(f"{op} ({what}): the best variant's kernel, upload and download against rows", 100))
        figures.add(fig, f"Series: {op} ({what}), kernel against transfers over rows", "series_split",
                    panels=[f"{d}@{h}" for d, h in sorted(devices)], axis=axis, op=op)


def page(devices, sessions, measurements, best, figures):
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>varex report</title>",
        f"<style>{STYLE}</style></head>",
        "<body><h1>varex report</h1>",
        f"<p>{len(devices)} devices, {len(sessions)} sessions, {len(measurements)} measurements.</p>",
        "<h2>Devices</h2>", devices_table(devices),
        "<h2>Best variants</h2>",
        "<p>Per device, operator and workload class, the fastest variant after re-measurement, and where "
        "measurements carry energy the most frugal ones (by energy per repetition, and by energy x time); "
        "best.csv has every column.</p>",
    ]
    parts += best_tables(best)
    parts += ["<h2>Sessions</h2>", sessions_table(sessions), "<h2>Plots</h2>"]
    for entry, data in figures.items:
        title = html.escape(entry["title"])
        parts.append(f"<h3>{title}</h3><img alt='{title}' src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


def main():
    directory = sys.argv[1]
    devices = read(directory, "devices.csv")
    sessions = read(directory, "sessions.csv")
    measurements = read(directory, "measurements.csv")
    kernels = read(directory, "kernels.csv")
    best = read(directory, "best.csv")
    defaults = read(directory, "defaults.csv")
    groups = sweep_groups(measurements, sessions)
    figures = Figures()
    heatmaps(groups, figures)
    speedups(groups, defaults, figures)
    transfers([b for b in best if (b.get("objective") or "time") == "time"], figures)
    breakdown(measurements, kernels, figures)
    convergence(measurements, sessions, figures)
    bandwidth(groups, devices, figures)
    energy(measurements, sessions, figures)
    series(sessions, measurements, defaults, figures)
    with open(os.path.join(directory, "plots.json"), "w") as f:
        json.dump([entry for entry, _ in figures.items], f, indent=1)
    with open(os.path.join(directory, "index.html"), "w") as f:
        f.write(page(devices, sessions, measurements, best, figures))
    print(f"{len(figures.items)} plots")


if __name__ == "__main__":
    main()
