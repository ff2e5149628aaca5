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
import os
import sys
import traceback

_SYSTEM_PYTHON = "/usr/bin/python3"
try:  # checked here, before plotting/ needs them, so that a wrong interpreter can be swapped
    import matplotlib  # noqa: F401
    import numpy  # noqa: F401
except ImportError as _missing:  # e.g. a pyenv python3 ahead of Debian's on PATH
    if (__name__ == "__main__" and os.path.exists(_SYSTEM_PYTHON) and not os.environ.get("PLOTS_REEXEC")
            and os.path.realpath(sys.executable) != os.path.realpath(_SYSTEM_PYTHON)):
        os.environ["PLOTS_REEXEC"] = "1"
        os.execv(_SYSTEM_PYTHON, [_SYSTEM_PYTHON] + sys.argv)
    raise ImportError(f"plots.py needs matplotlib and numpy ({_missing}): install python3-matplotlib "
                      f"(tools/setup.sh) and use {_SYSTEM_PYTHON}") from _missing

# The plot functions live in plotting/ (one module per figure family); this file is their CLI and
# the name tools/reproduce imports them by.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from experiments.plotting.gantt import plot_gantt  # noqa: E402
from experiments.plotting.heatmap import plot_heatmap_block_wait  # noqa: E402
from experiments.plotting.latency import plot_latency_best_block, plot_rtt_vs_block  # noqa: E402
from experiments.plotting.policies import plot_adaptive_vs_fixed, plot_scene_policies  # noqa: E402
from experiments.plotting.speedup import plot_speedup_vs_workers  # noqa: E402
from experiments.plotting.wait_search import plot_waitsearch  # noqa: E402

__all__ = ["plot_speedup_vs_workers", "plot_heatmap_block_wait", "plot_adaptive_vs_fixed", "plot_rtt_vs_block",
           "plot_latency_best_block", "plot_scene_policies", "plot_waitsearch", "plot_gantt", "main"]


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
