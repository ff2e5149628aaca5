#!/usr/bin/python3
"""Lease by lease, where a simulated run and a real one part ways: both `--stats` JSON files
(`farm master --stats`, `farm sim --stats`) side by side, per worker, in the terms the simulator
models (start-up, speed, per-lease overhead, idle time between leases).

  tools/sim/compare_runs.py REAL.json SIM.json [--cost-map MAP]

Workers are paired in id order (the validation names its simulated workers in the order the real
ones join). With --cost-map (the map `farm sim` was given, at the run's resolution), each
worker's effective speed is the map's cost of the blocks it rendered / its render seconds.

Per lease: overhead = received - assigned - render - queued, that is both network trips, the
result's transfer, the worker's own per-block work and the master's delay in answering.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools.cost_map import CostMap  # noqa: E402
from farmtools.run_window import window_bounds  # noqa: E402


def busy_union(intervals):
    """Seconds covered by the union of [a, b) intervals."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def summarise(stats, cost_map=None):
    """Per-run and per-worker figures of a stats JSON (real or simulated)."""
    leases = [b for b in stats["blocks"] if b["received"] >= 0]
    accepted = [b for b in leases if b["outcome"] == "accepted"]
    t0, last = window_bounds(stats)
    run = {"window": last - t0, "first_assigned": t0,
           "leases": len(stats["blocks"]), "accepted": len(accepted)}
    workers = []
    for w in sorted(stats["workers"], key=lambda w: w["id"]):
        mine = [b for b in leases if b["worker"] == w["id"]]
        all_mine = [b for b in stats["blocks"] if b["worker"] == w["id"]]
        row = {"name": w["name"], "joined": w["joined"] - t0, "leases": len(all_mine)}
        if mine:
            render = sum(b["render_seconds"] for b in mine)
            overheads = [b["received"] - b["assigned"] - b["render_seconds"] - b["queued_seconds"] for b in mine]
            first, last = min(b["assigned"] for b in all_mine), max(b["received"] for b in mine)
            row.update(first_assigned=first - t0, last_received=last - t0, render=render,
                       overhead_median_ms=statistics.median(overheads) * 1e3,
                       overhead_sum=sum(overheads),
                       idle=(last - first) - busy_union([(b["assigned"], b["received"]) for b in mine]),
                       pixels=sum(b["width"] * b["height"] for b in mine))
            if cost_map:
                cost = sum(cost_map.cost(b["frame"], b["x"], b["y"], b["width"], b["height"]) for b in mine)
                row["speed"] = cost / render if render > 0 else None
        workers.append(row)
    return run, workers


COLUMNS = [("joined", "joined (s)", "{:.3f}"), ("first_assigned", "1st lease (s)", "{:.3f}"),
           ("last_received", "last result (s)", "{:.3f}"), ("leases", "leases", "{}"),
           ("render", "render (s)", "{:.3f}"), ("speed", "speed", "{:.3f}"),
           ("overhead_median_ms", "overhead/lease median (ms)", "{:.2f}"), ("overhead_sum", "overhead sum (s)", "{:.3f}"),
           ("idle", "idle between leases (s)", "{:.3f}")]


def cell(row, key, fmt):
    v = row.get(key)
    return "-" if v is None else fmt.format(v)


def report(real, sim, cost_map=None):
    (rr, rw), (sr, sw) = summarise(real, cost_map), summarise(sim, cost_map)
    err = (sr["window"] - rr["window"]) / rr["window"] if rr["window"] > 0 else float("nan")
    lines = [f"window: real {rr['window']:.3f} s, sim {sr['window']:.3f} s ({err:+.1%}); "
             f"leases: real {rr['leases']}, sim {sr['leases']}", "",
             "| worker | run | " + " | ".join(h for _, h, _ in COLUMNS) + " |", "|---|---|" + "---|" * len(COLUMNS)]
    for i in range(max(len(rw), len(sw))):
        for label, rows in (("real", rw), ("sim", sw)):
            if i < len(rows):
                r = rows[i]
                lines.append(f"| {r['name']} | {label} | " + " | ".join(cell(r, k, f) for k, _, f in COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("real")
    ap.add_argument("sim")
    ap.add_argument("--cost-map", help="the map farm sim was given, for each worker's effective speed")
    args = ap.parse_args()
    try:
        with open(args.real) as f:
            real = json.load(f)
        with open(args.sim) as f:
            sim = json.load(f)
        cost_map = CostMap.read(args.cost_map) if args.cost_map else None
    except (OSError, ValueError) as e:
        print(f"compare_runs: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(report(real, sim, cost_map))
    return 0


if __name__ == "__main__":
    sys.exit(main())
