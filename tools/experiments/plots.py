#!/usr/bin/env python3
"""Plots of the sweep (tools/sweep -> results/sweep.csv) and of one run's stats JSON.

Every function takes its input path(s) and an output PNG path, writes the PNG and returns the
output path. Repetitions of one configuration (rows equal in every setting column, `rep` aside)
are aggregated with the MEDIAN; error bars span min..max over the repetitions. "How fast" is
`window_s` (first assignment to last accepted block, lower is better); speedup is
single_s / window_s. Rows of another experiment or mode, and rows without the value a plot needs
(a failed run leaves it empty), are ignored; when nothing is left the function raises
ValueError("<function>: no rows for experiment X in FILE ...") and writes nothing.

1. plot_speedup_vs_workers (experiment "speedup", mode farm): median speedup against the number
   of workers, one line per scene, dashed ideal line (median `ideal_speedup`, which is
   single_s / lower bound: the number of workers on a homogeneous cluster). The paper's Figure 11.
2. plot_heatmap_block_wait (experiment "heatmap", mode farm): median window over a grid of
   initial block side x base waiting time, best cell outlined; one panel per policy (and per
   scene / resolution / cluster if the rows hold several), one shared colour scale. The search
   behind the paper's choice of block size and waiting time; no single figure of the paper.
3. plot_adaptive_vs_fixed (experiment "resolution", mode farm): per image resolution, bars of the
   best fixed block size, the paper's halving ("seed") and "adaptive", as median speedup, with
   the change of median window against best fixed written above, and the ideal speedup
   (median single_s / lower_bound_s) as a black marker. The paper's Figure 13.
4. plot_rtt_vs_block (experiment "rtt", mode null): median round trip per block (null renderer)
   against block side, log-log, one line per network. The paper's Table 1, as a plot.
5. plot_latency_best_block (experiment "latency", mode farm): median window against block side,
   one line per network ordered by one-way delay, the best block of each network starred: how the
   best block size moves with latency. Beyond the paper.
6. plot_scene_policies (experiment "scenes", mode farm): per scene, one bar per (policy, block)
   configuration, median window divided by that scene's best fixed configuration (1.0 = best
   fixed, below 1 is better). Beyond the paper (it rendered one scene).
7. plot_waitsearch (experiment "waitsearch", mode farm): window of every repetition (dots) and
   the median (line) against the base waiting time; the chosen wait (lowest median) starred.
   The tuning of the paper's waiting time; no figure of the paper.
8. plot_gantt (one run's stats JSON written by `farm master/render --stats`): a space-time chart,
   one lane per worker, every lease a bar coloured by block side, wasted leases hatched grey,
   policy decisions as red ticks: the view the paper's authors got from XPVM.

CLI: python3 tools/experiments/plots.py --csv results/sweep.csv --outdir results/plots
         [--gantt-json FILE ...]
makes every plot for which the CSV has rows, prints what was made and what was skipped and why,
and exits 0 when at least one plot was made, 1 otherwise (or when a plot failed unexpectedly).
Needs matplotlib and numpy (Debian: python3-matplotlib, installed by tools/setup.sh); run as a
script by an interpreter without them, it re-runs itself with /usr/bin/python3.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback

_SYSTEM_PYTHON = "/usr/bin/python3"
try:
    import matplotlib
    import numpy as np
except ImportError as _missing:  # e.g. a pyenv python3 ahead of Debian's on PATH
    if (__name__ == "__main__" and os.path.exists(_SYSTEM_PYTHON) and not os.environ.get("PLOTS_REEXEC")
            and os.path.realpath(sys.executable) != os.path.realpath(_SYSTEM_PYTHON)):
        os.environ["PLOTS_REEXEC"] = "1"
        os.execv(_SYSTEM_PYTHON, [_SYSTEM_PYTHON] + sys.argv)
    raise ImportError(f"plots.py needs matplotlib and numpy ({_missing}): install python3-matplotlib "
                      f"(tools/setup.sh) and use {_SYSTEM_PYTHON}") from _missing

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/, for farmtools
from farmtools.networks import PRESETS as NETWORK_PRESETS, one_way_delay_ms as _delay_ms  # noqa: E402
from farmtools.sweep_data import (best_config, configs as _configs, experiment_rows as _select, fmt as _fmt,  # noqa: E402
                                  group as _group, metric as _value, num as _num, policies as _policies,
                                  setting as _key, spread as _spread, varying as _varying,
                                  varying_within as _varying_within)


def _best_config(rows):
    """(median window, rows of the configuration with the lowest median window)."""
    _, crows, med = best_config(rows)
    return med, crows

__all__ = ["plot_speedup_vs_workers", "plot_heatmap_block_wait", "plot_adaptive_vs_fixed", "plot_rtt_vs_block",
           "plot_latency_best_block", "plot_scene_policies", "plot_waitsearch", "plot_gantt", "main"]

DPI = 120
POLICY_COLOURS = {"fixed": "tab:blue", "seed": "tab:orange", "adaptive": "tab:green"}
POLICY_CMAPS = {"fixed": "Blues", "seed": "Oranges", "adaptive": "Greens"}
BLOCK_SIDES = (4, 8, 16, 32, 64, 128, 256)


def _yerr(meds, los, his):
    meds, los, his = (np.asarray(a, dtype=float) for a in (meds, los, his))
    return np.vstack([meds - los, his - meds])


_LABELS = {"spp": "{} spp", "policy": "policy {}", "block": "block {}", "min_block": "min block {}",
           "wait": "wait {} s", "max_copies": "max copies {}", "cluster": "cluster {}", "workers": "{} workers",
           "network": "network {}", "threads": "threads/worker {}", "speeds": "speeds {}"}


def _describe(row, cols):
    parts = []
    for c in cols:
        v = _key(row, c)
        if v:
            parts.append(_LABELS.get(c, "{}").format(v))
    return ", ".join(parts)


def _context(rows, cols=("scene", "res", "spp", "cluster", "network", "policy", "block", "wait", "threads")):
    """The settings that are the same in every row, as text for a title."""
    same = [c for c in cols if c not in _varying(rows, cols)]
    return _describe(rows[0], same)


# ----------------------------------------------------------------------------- axes helpers
def _network_label(network):
    d = _delay_ms(network)
    if network == "loopback" or network in NETWORK_PRESETS or ("," in network and math.isfinite(d)):
        return f"{network} ({d:g} ms one way)"
    return network


def _log2_axis(ax, values, axis="x"):
    """Log-2 axis with ticks at exactly the given values."""
    vals = sorted(set(values))
    getattr(ax, f"set_{axis}scale")("log", base=2)
    getattr(ax, f"set_{axis}ticks")(vals)
    getattr(ax, f"set_{axis}ticklabels")([_fmt(v) for v in vals])
    getattr(ax, f"{axis}axis").set_minor_locator(NullLocator())
    lo, hi = vals[0], vals[-1]
    getattr(ax, f"set_{axis}lim")(lo / 1.3, hi * 1.3)


def _log_y(ax):
    """Log y axis labelled 1, 2, 5, 10, 20, ... in plain numbers (a narrow range gets no decade tick)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _title(ax, main, rows, cols=None):
    ctx = _context(rows) if cols is None else _context(rows, cols)
    ax.set_title(main + (f"\n{ctx}" if ctx else ""), fontsize=11)


def _save(fig, out):
    d = os.path.dirname(os.path.abspath(out))
    os.makedirs(d, exist_ok=True)
    fig.savefig(out, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return out


def _series_colour(i):
    return plt.get_cmap("tab10")(i % 10)


# ----------------------------------------------------------------------------- 1. speedup
def plot_speedup_vs_workers(csv_path, out):
    """Median speedup against worker count, one line per scene, dashed ideal (paper Figure 11)."""
    func = "plot_speedup_vs_workers"
    rows = _select(csv_path, "speedup", func, need=("workers", "speedup"))
    extra = _varying_within(rows, ("res", "spp", "policy", "block", "wait", "network", "threads"), ("workers",))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for i, (key, srows) in enumerate(sorted(_group(rows, ("scene", *extra)).items())):
        by_n = _group(srows, ("workers",))
        xs = sorted(by_n, key=lambda k: float(k[0]))
        stats = [_spread(by_n[k], "speedup") for k in xs]
        meds, los, his = zip(*stats)
        label = key[0] + (f" ({_describe(srows[0], extra)})" if extra else "")
        ax.errorbar([float(k[0]) for k in xs], meds, yerr=_yerr(meds, los, his), marker="o", capsize=4,
                    color=_series_colour(i), label=label)
    ideal_rows = [r for r in rows if _value(r, "ideal") is not None]
    if ideal_rows:
        by_n = _group(ideal_rows, ("workers",))
        xs = sorted(by_n, key=lambda k: float(k[0]))
        ax.plot([float(k[0]) for k in xs], [_spread(by_n[k], "ideal")[0] for k in xs], "k--", lw=1.3,
                label="ideal (single / lower bound)")
    ns = sorted({int(_value(r, "workers")) for r in rows})
    ax.set_xticks(ns)
    ax.set_xlim(min(ns) - 0.3, max(ns) + 0.3)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("workers")
    ax.set_ylabel("speedup (single-node time / farm window)")
    ax.grid(True, alpha=0.35)
    ax.legend(loc="upper left")
    _title(ax, "Speedup against the number of workers", rows,
           ("res", "spp", "cluster", "network", "policy", "block", "wait", "threads"))
    return _save(fig, out)


# ----------------------------------------------------------------------------- 2. heatmap
def _heat_cell(ax, x, y, v, norm, cmap):
    r, g, b, _ = cmap(norm(v))
    colour = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
    ax.text(x, y, "%.2f" % v, ha="center", va="center", fontsize=8, color=colour)


def _wait_sort(w):
    """Waits ascending; '' (fixed policy: no wait) first, other text after the numbers."""
    v = _num(w)
    return (0, v, w) if v is not None else ((-1 if w == "" else 1), 0.0, w)


def plot_heatmap_block_wait(csv_path, out):
    """Median window over block side x waiting time, best cell outlined, one panel per policy."""
    func = "plot_heatmap_block_wait"
    rows = _select(csv_path, "heatmap", func, need=("window_s", "block"))
    facet_cols = _varying_within(rows, ("scene", "res", "cluster", "network", "spp", "threads", "max_copies",
                                        "min_block"), ("block", "wait")) + ["policy"]
    order = {p: i for i, p in enumerate(_policies(rows))}
    facets = sorted(_group(rows, facet_cols).items(), key=lambda kv: (kv[0][:-1], order[kv[0][-1]]))
    blocks = sorted({_key(r, "block") for r in rows}, key=float)
    waits = sorted({_key(r, "wait") for r in rows}, key=_wait_sort)
    grids = []
    for _, frows in facets:
        m = np.full((len(waits), len(blocks)), np.nan)
        for (b, w), crows in _group(frows, ("block", "wait")).items():
            # several configurations in one cell (e.g. max_copies varies): keep the best median
            med = min(_spread(c, "window_s")[0] for c in _configs(crows).values())
            m[waits.index(w), blocks.index(b)] = med
        grids.append(m)
    vmin = min(np.nanmin(g) for g in grids)
    vmax = max(np.nanmax(g) for g in grids)
    if vmin > 0 and vmax / vmin > 3:  # one terrible corner would flatten the rest of the scale
        norm = matplotlib.colors.LogNorm(vmin=vmin, vmax=vmax)
    else:
        pad = 0.0 if vmax > vmin else 0.05 * abs(vmin) + 1e-6  # one value: still a sensible scale
        norm = matplotlib.colors.Normalize(vmin=vmin - pad, vmax=vmax + pad)
    cmap = matplotlib.colormaps["viridis_r"].copy()
    cmap.set_bad("#e0e0e0")
    ncols = min(3, len(facets))
    nrows = math.ceil(len(facets) / ncols)
    cell_w, cell_h = 0.9, 0.5
    size = (max(7.0, ncols * (cell_w * len(blocks) + 1.4) + 1.2), nrows * (cell_h * len(waits) + 1.6) + 0.6)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained", figsize=size)
    for ax, (_, frows), m in zip(axes.flat, facets, grids):
        im = ax.imshow(np.ma.masked_invalid(m), origin="lower", cmap=cmap, norm=norm, aspect="auto")
        for (yi, xi), v in np.ndenumerate(m):
            if np.isfinite(v):
                _heat_cell(ax, xi, yi, v, norm, cmap)
            else:
                ax.text(xi, yi, "–", ha="center", va="center", fontsize=8, color="grey")
        yi, xi = np.unravel_index(np.nanargmin(m), m.shape)
        ax.add_patch(Rectangle((xi - 0.5, yi - 0.5), 1, 1, fill=False, edgecolor="red", lw=3))
        ax.set_xticks(range(len(blocks)), blocks)
        ax.set_yticks(range(len(waits)), [w if w else "n/a" for w in waits])
        ax.set_xlabel("initial block side (pixels)")
        ax.set_ylabel("base waiting time (s)")
        wait = f"wait {waits[yi]} s" if waits[yi] else "no wait"
        best = f"best: block {blocks[xi]}, {wait} → {m[yi, xi]:.2f} s"
        ax.set_title(f"{_describe(frows[0], facet_cols)}\n{best}", fontsize=10)
    for ax in list(axes.flat)[len(facets):]:
        ax.set_visible(False)
    log = isinstance(norm, matplotlib.colors.LogNorm)
    cbar = fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.9,
                        label="median window (s), lower is better" + (" (log scale)" if log else ""))
    if log:
        cbar.ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        cbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        cbar.ax.yaxis.set_minor_formatter(NullFormatter())
    ctx = _context(rows, ("scene", "res", "spp", "cluster", "network", "threads"))
    fig.suptitle(f"Median window over block side and waiting time\n{ctx}", fontsize=12)
    return _save(fig, out)


# ----------------------------------------------------------------------------- 3. adaptive vs fixed
def _config_label(crows, all_rows, always=("block",)):
    cols = [c for c in ("block", "wait", "min_block", "max_copies") if c in always or c in _varying(all_rows, (c,))]
    return _describe(crows[0], cols).replace("block ", "B=").replace("wait ", "w=").replace(" s", "s")


def plot_adaptive_vs_fixed(csv_path, out):
    """Speedup of best fixed block vs seed vs adaptive, per resolution (paper Figure 13)."""
    func = "plot_adaptive_vs_fixed"
    rows = _select(csv_path, "resolution", func, need=("window_s", "speedup"))
    extra = _varying_within(rows, ("scene", "cluster", "network", "spp"), ("res",))
    groups = sorted(_group(rows, ("res", *extra)).items(),
                    key=lambda kv: (_value(kv[1][0], "width") * _value(kv[1][0], "height"), kv[0]))
    policies = _policies(rows)
    width = 0.8 / len(policies)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 + len(groups) * len(policies) * 0.9), 5.8))
    top = 0.0
    for gi, (gkey, grows) in enumerate(groups):
        by_policy = _group(grows, ("policy",))
        fixed = _best_config(by_policy[("fixed",)])[0] if ("fixed",) in by_policy else None
        present = [p for p in policies if (p,) in by_policy]
        for pi, p in enumerate(present):
            med_w, crows = _best_config(by_policy[(p,)])
            med, lo, hi = _spread(crows, "speedup")
            x = gi + (pi - (len(present) - 1) / 2) * width
            ax.bar(x, med, width * 0.92, color=POLICY_COLOURS.get(p, "tab:purple"), alpha=0.85,
                   yerr=[[med - lo], [hi - med]], capsize=4, ecolor="black")
            label = _config_label(crows, by_policy[(p,)], always=("block",) if p == "fixed" else ())
            if label:
                ax.text(x, med * 0.04, label, rotation=90, ha="center", va="bottom", fontsize=8)
            if p != "fixed" and fixed:
                pct = (fixed / med_w - 1) * 100
                ax.text(x, hi * 1.02, f"{pct:+.1f}%", ha="center", va="bottom", fontsize=9, fontweight="bold",
                        color="darkgreen" if pct >= 0 else "firebrick")
            top = max(top, hi * 1.12)
        ideal_rows = [r for r in grows if _value(r, "ideal") is not None]
        if ideal_rows:
            ideal = _spread(ideal_rows, "ideal")[0]
            ax.hlines(ideal, gi - 0.45, gi + 0.45, colors="black", lw=2.5)
            top = max(top, ideal * 1.08)
    ax.set_xticks(range(len(groups)), [" ".join(k) for k, _ in groups])
    ax.set_ylim(0, top)
    ax.set_xlabel("image resolution (pixels)" + (f" and {', '.join(extra)}" if extra else ""))
    ax.set_ylabel("median speedup (single-node time / farm window)")
    ax.grid(True, axis="y", alpha=0.35)
    handles = [Patch(color=POLICY_COLOURS.get(p, "tab:purple"), alpha=0.85, label="best fixed" if p == "fixed" else p)
               for p in policies]
    handles.append(Line2D([], [], color="black", lw=2.5, label="ideal (single / lower bound)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _title(ax, "Best fixed block size vs halving (seed) vs adaptive\n"
           "% = change of median window against best fixed (+ is faster)", rows,
           ("scene", "spp", "cluster", "network", "threads"))
    return _save(fig, out)


# ----------------------------------------------------------------------------- 4./5. per-network lines
def _networks(rows):
    return sorted({_key(r, "network") for r in rows}, key=lambda n: (_delay_ms(n), n))


def _network_lines(ax, rows, metric):
    """Median `metric` against block, colour per network (ordered by delay), line style per other
    varying setting; returns {(network, other settings): (best block, its median, colour, style)}."""
    extra = _varying_within(rows, ("scene", "res", "spp", "policy", "wait", "cluster", "threads", "max_copies"),
                            ("network", "block"))
    styles = {k: ("-", "--", ":", "-.")[i % 4] for i, k in enumerate(sorted(_group(rows, extra)))}
    best = {}
    for i, net in enumerate(_networks(rows)):
        for other, srows in sorted(_group([r for r in rows if _key(r, "network") == net], extra).items()):
            by_block = _group(srows, ("block",))
            xs = sorted(by_block, key=lambda k: float(k[0]))
            meds, los, his = zip(*[_spread(by_block[k], metric) for k in xs])
            bx = [float(k[0]) for k in xs]
            label = _network_label(net) + (f", {_describe(srows[0], extra)}" if extra else "")
            ax.errorbar(bx, meds, yerr=_yerr(meds, los, his), marker="o", capsize=3, color=_series_colour(i),
                        ls=styles[other], label=label)
            j = int(np.argmin(meds))
            best[(net, _describe(srows[0], extra))] = (bx[j], meds[j], _series_colour(i), styles[other])
    return best


def plot_rtt_vs_block(csv_path, out):
    """Round trip per block (null renderer) against block side, per network (paper Table 1)."""
    func = "plot_rtt_vs_block"
    rows = _select(csv_path, "rtt", func, need=("rtt_us", "block"), modes=("null",))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    _network_lines(ax, rows, "rtt_us")
    _log2_axis(ax, [_value(r, "block") for r in rows])
    _log_y(ax)
    ax.set_xlabel("block side (pixels)")
    ax.set_ylabel("median round trip per block (µs)")
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", axis="y", alpha=0.15)
    ax.legend(loc="upper left")
    _title(ax, "Round trip per block with a null renderer", rows, ("cluster", "threads"))
    return _save(fig, out)


def plot_latency_best_block(csv_path, out):
    """Median window against block side per network, best block starred; right: best block per network."""
    func = "plot_latency_best_block"
    rows = _select(csv_path, "latency", func, need=("window_s", "block"))
    fig, (ax, bx_ax) = plt.subplots(1, 2, figsize=(12, 5.5), gridspec_kw={"width_ratios": [2.3, 1]},
                                    layout="constrained")
    best = _network_lines(ax, rows, "window_s")
    for bx, by, colour, _ in best.values():
        ax.plot(bx, by, marker="*", markersize=16, color=colour, markeredgecolor="black", zorder=5)
    blocks = [_value(r, "block") for r in rows]
    _log2_axis(ax, blocks)
    windows = [_value(r, "window_s") for r in rows]
    if min(windows) > 0 and max(windows) / min(windows) > 5:
        _log_y(ax)
    ax.set_xlabel("block side (pixels)")
    ax.set_ylabel("median window (s), lower is better")
    ax.grid(True, which="both", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], ls="", marker="*", markersize=14, color="grey", markeredgecolor="black"))
    labels.append("best block of the network")
    ax.legend(handles, labels, loc="best", fontsize=8)
    ax.set_title("Median window against block side", fontsize=10)
    nets = _networks(rows)
    others = sorted({o for _, o in best})
    for k, other in enumerate(others):
        shift = (k - (len(others) - 1) / 2) * 0.12  # side by side where series agree
        pts = [(nets.index(n) + shift, best[(n, o)][0], best[(n, o)][2]) for n, o in best if o == other]
        xs, ys, cs = zip(*pts)
        style = next(v[3] for (n, o), v in best.items() if o == other)
        bx_ax.plot(xs, ys, color="grey", ls=style, lw=1.2, label=other or None)
        bx_ax.scatter(xs, ys, marker="*", s=260, c=cs, edgecolors="black", zorder=5)
    _log2_axis(bx_ax, blocks, axis="y")
    bx_ax.set_xticks(range(len(nets)), [n if math.isinf(_delay_ms(n)) else f"{n}\n{_delay_ms(n):g} ms"
                                        for n in nets], fontsize=8)
    bx_ax.set_xlim(-0.5, len(nets) - 0.5)
    bx_ax.set_xlabel("network (one-way delay)")
    bx_ax.set_ylabel("best block side (pixels)")
    bx_ax.grid(True, alpha=0.3)
    if any(o for _, o in best):
        bx_ax.legend(fontsize=8)
    bx_ax.set_title("Best block per network", fontsize=10)
    ctx = _context(rows, ("scene", "res", "spp", "cluster", "policy", "wait", "threads"))
    fig.suptitle(f"How the best block size moves with network latency\n{ctx}", fontsize=12)
    return _save(fig, out)


# ----------------------------------------------------------------------------- 6. scenes x policies
def _scene_configs(rows):
    """Sorted list of (policy, block, wait) settings present, wait '' where it never varies."""
    keys = {(_key(r, "policy"), _key(r, "block"), _key(r, "wait")) for r in rows}
    vary_wait = {p for p in {k[0] for k in keys} if len({k[2] for k in keys if k[0] == p}) > 1}
    keys = {(p, b, w if p in vary_wait else "") for p, b, w in keys}
    order = {p: i for i, p in enumerate(_policies(rows))}
    return sorted(keys, key=lambda k: (order[k[0]], float(k[1]) if k[1] else 0.0, _wait_sort(k[2])))


def _config_colour(cfg, cfgs):
    same = [c for c in cfgs if c[0] == cfg[0]]
    shade = 0.45 + 0.45 * (same.index(cfg) / max(1, len(same) - 1))
    return plt.get_cmap(POLICY_CMAPS.get(cfg[0], "Purples"))(shade)


def plot_scene_policies(csv_path, out):
    """Per scene, median window of every (policy, block) config over the scene's best fixed one."""
    func = "plot_scene_policies"
    rows = _select(csv_path, "scenes", func, need=("window_s",))
    cfgs = _scene_configs(rows)
    scenes = sorted({_key(r, "scene") for r in rows})
    width = 0.84 / len(cfgs)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.2 + len(scenes) * len(cfgs) * 0.42), 5.8))
    ticks, top = [], 1.1
    for si, scene in enumerate(scenes):
        srows = [r for r in rows if _key(r, "scene") == scene]
        fixed = [r for r in srows if _key(r, "policy") == "fixed"]
        ref = _best_config(fixed or srows)[0]
        ticks.append(scene if fixed else f"{scene}*")
        for ci, cfg in enumerate(cfgs):
            crows = [r for r in srows if (_key(r, "policy"), _key(r, "block")) == cfg[:2]
                     and (not cfg[2] or _key(r, "wait") == cfg[2])]
            if not crows:
                continue
            med, lo, hi = (v / ref for v in _spread(crows, "window_s"))
            x = si + (ci - (len(cfgs) - 1) / 2) * width
            ax.bar(x, med, width * 0.9, color=_config_colour(cfg, cfgs), yerr=[[med - lo], [hi - med]],
                   capsize=2, ecolor="black", error_kw={"lw": 0.8})
            ax.text(x, hi + 0.02, f"{med:.2f}", ha="center", va="bottom", fontsize=7,
                    rotation=90 if len(cfgs) > 3 else 0)
            top = max(top, hi + 0.18)
    ax.axhline(1.0, color="black", ls="--", lw=1)
    ax.set_xticks(range(len(scenes)), ticks)
    ax.set_ylim(0, top)
    note = "  (* no fixed run: normalised to the scene's best run)" if any("*" in t for t in ticks) else ""
    ax.set_xlabel("scene" + note)
    ax.set_ylabel("median window / best fixed window (lower is better)")
    ax.grid(True, axis="y", alpha=0.35)
    handles = [Patch(color=_config_colour(c, cfgs), label=" ".join(v for v in (c[0], f"block {c[1]}",
                                                                            f"wait {c[2]} s" if c[2] else "") if v))
               for c in cfgs]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="policy, initial block")
    _title(ax, "Policies per scene, normalised to the scene's best fixed block size", rows,
           ("res", "spp", "cluster", "network", "threads"))
    return _save(fig, out)


# ----------------------------------------------------------------------------- 7. wait search
def plot_waitsearch(csv_path, out):
    """Window of each repetition (dots) and median (line) against the base wait; best starred."""
    func = "plot_waitsearch"
    rows = _select(csv_path, "waitsearch", func, need=("window_s", "wait"))
    extra = _varying_within(rows, ("scene", "res", "policy", "block", "cluster", "network", "spp", "threads",
                                   "max_copies"), ("wait",))
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    chosen = []
    for i, (key, srows) in enumerate(sorted(_group(rows, extra).items())):
        colour = _series_colour(i)
        label = _describe(srows[0], extra) or "median"
        ax.scatter([_value(r, "wait") for r in srows], [_value(r, "window_s") for r in srows], s=18, alpha=0.55,
                   color=colour, edgecolors="none")
        by_wait = _group(srows, ("wait",))
        ws = sorted(by_wait, key=lambda k: float(k[0]))
        meds = [_spread(by_wait[k], "window_s")[0] for k in ws]
        wx = [float(k[0]) for k in ws]
        ax.plot(wx, meds, "-", marker="_", markersize=12, color=colour, label=label)
        j = int(np.argmin(meds))
        ax.plot(wx[j], meds[j], marker="*", markersize=18, color=colour, markeredgecolor="black", zorder=5)
        ax.axvline(wx[j], color=colour, ls=":", lw=1)
        chosen.append(f"{wx[j]:g} s" + (f" ({label})" if extra else ""))
    waits = [_value(r, "wait") for r in rows]
    if min(waits) > 0 and max(waits) / min(waits) >= 8:
        _log2_axis(ax, waits)
    elif len(set(waits)) <= 12:
        ax.set_xticks(sorted(set(waits)), [_fmt(w) for w in sorted(set(waits))])
    ax.set_xlabel("base waiting time (s)")
    ax.set_ylabel("window (s), lower is better")
    ax.grid(True, alpha=0.35)
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], ls="", marker="o", color="grey", alpha=0.55),
                Line2D([], [], ls="", marker="*", markersize=14, color="grey", markeredgecolor="black")]
    labels += ["one repetition", "chosen wait (lowest median)"]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _title(ax, f"Search of the base waiting time (line = median)\nchosen: {'; '.join(chosen)}", rows,
           ("scene", "res", "spp", "cluster", "network", "policy", "block", "threads"))
    return _save(fig, out)


# ----------------------------------------------------------------------------- 8. Gantt chart
def _load_stats(path):
    if not os.path.exists(path):
        raise ValueError(f"plot_gantt: no blocks in {path} (the file does not exist)")
    try:
        with open(path) as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"plot_gantt: no blocks in {path} (not JSON: {e})") from None
    if not isinstance(data, dict) or not data.get("blocks"):
        raise ValueError(f"plot_gantt: no blocks in {path}")
    return data


def _lease_intervals(data, end):
    """{worker id: [(t0, t1, kind, size)]}; kind is accepted | wasted | open (never received)."""
    left = {w["id"]: w.get("left", -1.0) for w in data.get("workers", [])}
    out = {}
    for b in data["blocks"]:
        start, finish, outcome = b.get("start", -1.0), b.get("finish", -1.0), b.get("outcome", "")
        if start < 0 or finish < 0:
            stop = left.get(b["worker"], -1.0) if outcome == "lost" else -1.0
            t0, t1, kind = b.get("assigned", 0.0), stop if stop >= 0 else end, "open"
        else:
            t0, t1, kind = start, finish, "accepted" if outcome == "accepted" else "wasted"
        out.setdefault(b["worker"], []).append((t0, max(t1, t0), kind, b.get("size", 0)))
    return out


def _partition(intervals, slack):
    """Greedy interval partitioning: [(interval, sub-lane)], no overlap inside a sub-lane beyond
    `slack` seconds (start/finish are estimated back from the receipt, so back-to-back leases of
    one thread can overlap by a few milliseconds). Leases never received go last, so the real
    work stays on the top sub-lanes."""
    ends, placed = [], []
    for iv in sorted(intervals, key=lambda iv: (iv[2] == "open", iv[0], iv[1])):
        lane = next((i for i, e in enumerate(ends) if e <= iv[0] + slack), None)
        if lane is None:
            ends.append(iv[1])
            lane = len(ends) - 1
        ends[lane] = iv[1]
        placed.append((iv, lane))
    return placed, max(1, len(ends))


def _size_colours(data):
    sizes = sorted(set(BLOCK_SIDES) | {b.get("size", 0) for b in data["blocks"]})
    cmap = plt.get_cmap("viridis", len(sizes))
    return {s: cmap(i) for i, s in enumerate(sizes)}


def _decision_ticks(ax, decisions, layout, end):
    """Red tick per policy decision across its worker's band; 'from→to' labels (when few) go
    above the band, or below when the previous label of that worker is too close."""
    last = {}
    for d in sorted(decisions, key=lambda d: d.get("time", 0)):
        if d.get("worker") not in layout:
            continue
        y0, n, _ = layout[d["worker"]]
        ax.vlines(d["time"], y0 - 0.05, y0 + n + 0.05, colors="red", lw=1.4, zorder=4)
        if len(decisions) <= 40:
            prev_t, prev_above = last.get(d["worker"], (-math.inf, False))
            above = not (prev_above and d["time"] - prev_t < 0.04 * end)
            ax.text(d["time"], y0 - 0.05 if above else y0 + n + 0.05, f"{d.get('from')}→{d.get('to')}", fontsize=6,
                    color="red", ha="center", va="bottom" if above else "top")
            last[d["worker"]] = (d["time"], above)


def plot_gantt(stats_json, out, title=None):
    """Space-time chart of one run: lanes per worker, leases coloured by block side (XPVM's view)."""
    data = _load_stats(stats_json)
    times = [t for b in data["blocks"] for t in (b.get("finish", -1), b.get("assigned", -1))]
    end = float(data.get("makespan_seconds") or 0) or max(times)
    workers = {w["id"]: w for w in data.get("workers", [])}
    lanes = _lease_intervals(data, end)
    for wid in lanes:
        workers.setdefault(wid, {"id": wid, "name": "worker", "threads": 1, "joined": -1, "left": -1})
    colours = _size_colours(data)
    layout, y = {}, 0.0
    for wid in sorted(workers):
        placed, n = _partition(lanes.get(wid, []), slack=max(0.02, 0.002 * end))
        layout[wid] = (y, n, placed)
        y += n + 0.5
    fig, ax = plt.subplots(figsize=(12, min(30.0, 1.6 + 0.38 * y)))
    edge = dict(edgecolor="white", linewidth=0.3) if len(data["blocks"]) < 1500 else dict(edgecolor="none")
    for wid, (y0, n, placed) in layout.items():
        groups = {}
        for (t0, t1, kind, size), lane in placed:
            groups.setdefault((kind, size, lane), []).append((t0, t1 - t0))
        for (kind, size, lane), spans in groups.items():
            yr = (y0 + lane + 0.1, 0.8)
            if kind == "accepted":
                ax.broken_barh(spans, yr, facecolors=colours[size], **edge)
            elif kind == "wasted":
                ax.broken_barh(spans, yr, facecolors="none", edgecolor="grey", hatch="////", linewidth=0.8)
            else:
                ax.broken_barh(spans, yr, facecolors="none", edgecolor="dimgrey", linestyle="--", linewidth=0.9)
        if y0 > 0:
            ax.axhline(y0 - 0.25, color="lightgrey", lw=0.8)
        w = workers[wid]
        mid = y0 + n / 2
        if w.get("joined", -1) >= 0:
            ax.plot(w["joined"], mid, marker=">", color="black", markersize=7, zorder=4)
        if w.get("left", -1) >= 0:
            died = w.get("died")
            ax.plot(w["left"], mid, marker="X" if died else "s", color="firebrick" if died else "black", markersize=7,
                    zorder=4)
    decisions = data.get("decisions") or []
    _decision_ticks(ax, decisions, layout, end)
    ax.set_yticks([y0 + n / 2 for y0, n, _ in layout.values()],
                  [f"{workers[w].get('name', 'worker')} ({w})" + (f"\n{workers[w]['threads']} threads"
                   if workers[w].get("threads", 1) > 1 else "") for w in layout])
    ax.set_ylim(y - 0.4, -0.3)
    ax.set_xlim(0, end)
    ax.set_xlabel("time since master start (s)")
    ax.set_ylabel("worker (sub-lanes: overlapping leases)")
    ax.grid(True, axis="x", alpha=0.35)
    used = sorted({b.get("size", 0) for b in data["blocks"] if b.get("outcome") == "accepted"})
    handles = [Patch(facecolor=colours[s], label=f"{s}") for s in used]
    handles += [Patch(facecolor="none", edgecolor="grey", hatch="////", label="cancelled / late"),
                Patch(facecolor="none", edgecolor="dimgrey", linestyle="--",
                      label="never received\n(assigned → end)"),
                Line2D([], [], color="red", lw=1.4, label="policy decision"),
                Line2D([], [], ls="", marker=">", color="black", label="joined"),
                Line2D([], [], ls="", marker="s", color="black", label="left"),
                Line2D([], [], ls="", marker="X", color="firebrick", label="died")]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="block side", fontsize=8)
    if title is None:
        scene = os.path.splitext(os.path.basename(str(data.get("scene", ""))))[0]
        title = (f"{scene} {data.get('width')}x{data.get('height')}, policy {data.get('policy')}, "
                 f"block {data.get('block_size')}: {len(data['blocks'])} leases on {len(workers)} workers, "
                 f"{len(decisions)} decisions, makespan {end:.2f} s")
    ax.set_title(title, fontsize=11)
    return _save(fig, out)


# ----------------------------------------------------------------------------- CLI
CSV_PLOTS = [("speedup_vs_workers.png", plot_speedup_vs_workers), ("heatmap_block_wait.png", plot_heatmap_block_wait),
             ("adaptive_vs_fixed.png", plot_adaptive_vs_fixed), ("rtt_vs_block.png", plot_rtt_vs_block),
             ("latency_best_block.png", plot_latency_best_block), ("scene_policies.png", plot_scene_policies),
             ("waitsearch.png", plot_waitsearch)]


def _attempt(name, fn, *args):
    """Runs one plot: 'made', 'skipped' (no data) or 'failed' (a bug: traceback printed)."""
    try:
        print(f"made     {fn(*args)}")
        return "made"
    except ValueError as e:
        print(f"skipped  {name}: {e}")
        return "skipped"
    except Exception:  # one broken plot must not stop the others
        print(f"FAILED   {name}:")
        traceback.print_exc()
        return "failed"


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plots of the sweep CSV and of run stats JSON files.")
    ap.add_argument("--csv", help="sweep CSV (tools/sweep --csv)")
    ap.add_argument("--outdir", required=True, help="folder for the PNGs (created if missing)")
    ap.add_argument("--gantt-json", action="append", default=[], metavar="FILE",
                    help="stats JSON of one run (farm --stats) for a Gantt chart; repeatable")
    args = ap.parse_args(argv)
    if not args.csv and not args.gantt_json:
        ap.error("nothing to plot: give --csv and/or --gantt-json")
    results = []
    if args.csv:
        for name, fn in CSV_PLOTS:
            results.append(_attempt(name, fn, args.csv, os.path.join(args.outdir, name)))
    for path in args.gantt_json:
        name = f"gantt_{os.path.splitext(os.path.basename(path))[0]}.png"
        results.append(_attempt(name, plot_gantt, path, os.path.join(args.outdir, name)))
    print(f"{results.count('made')} made, {results.count('skipped')} skipped, {results.count('failed')} failed")
    return 0 if results.count("made") and not results.count("failed") else 1


if __name__ == "__main__":
    sys.exit(main())
