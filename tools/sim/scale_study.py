#!/usr/bin/python3
"""Scale study of the scheduler with the simulator (`farm sim`): 100, 1,000 and 10,000 workers,
speeds spread 10x, one-way latencies 0-100 ms, some workers failing and some joining late, each
policy against the ideal lower bound; plus the simulator's own speed.

  tools/sim/scale_study.py --cost-map results/sim/chess2_640x480_spp8.costmap [--quick]

Writes results/sim/scale_study.csv, results/sim/scale_study.md and results/sim/plots/scale_*.png
(--quick: a small run into build/scale-quick, for CI).
"""
import argparse
import csv
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CLUSTER = """# scale study: {n} workers
per_block_overhead_ms = 0.15
[network]
bandwidth_mbit = 100

[[group]]
name = "steady"
count = {steady}
speed = [0.1, 1.0]
latency_ms = [0, 100]
startup = [0.2, 2.0]

[[group]]
name = "late"            # join while the job runs
count = {late}
speed = [0.1, 1.0]
latency_ms = [0, 100]
join = [0, {horizon}]

[[group]]
name = "failing"         # crash silently while the job runs
count = {failing}
speed = [0.1, 1.0]
latency_ms = [0, 100]
fail = [1, {horizon}]
"""

POLICIES = [("fixed", 16), ("fixed", 32), ("fixed", 64), ("seed", 64), ("adaptive", 64)]


def run_sim(farm, cost_map, cluster, args, stats):
    cmd = [farm, "sim", "--cost-map", cost_map, "--cluster", cluster, "--stats", stats] + args
    t0 = time.monotonic()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    if out.returncode not in (0, 1):
        raise SystemExit(f"farm sim failed: {' '.join(cmd)}\n{out.stdout}")
    m = re.search(r"Events\s+(\d+) in ([\d.]+) s", out.stdout)
    with open(stats) as f:
        st = json.load(f)
    return st, int(m.group(1)), float(m.group(2)), wall, out.stdout


def analyse(st):
    acc = [b for b in st["blocks"] if b["outcome"] == "accepted"]
    first = min(b["assigned"] for b in st["blocks"])
    end = max(b["received"] for b in acc)
    drained = max(b["assigned"] for b in st["blocks"] if not b["copy"])
    return first, end, drained


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--cost-map", required=True, help="a cost map (farm single --cost-map), rescaled to --width x --height")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", help="output folder (default results/sim, or build/scale-quick with --quick)")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(ROOT, "build/scale-quick" if args.quick else "results/sim")
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    sizes = [20, 100] if args.quick else [100, 1000, 10000]
    # A 4K frame at 16x the map's samples: enough work that 10,000 workers are not idle at once.
    width, height, work = (640, 360, 4) if args.quick else (3840, 2160, 16)
    frames = 2 if args.quick else 8
    tmp = tempfile.mkdtemp(prefix="farm_scale_")
    rows = []
    for n in sizes:
        late, failing = max(1, n // 20), max(1, n // 20)
        steady = n - late - failing
        horizon = 4 if args.quick else 30
        cluster = os.path.join(tmp, f"cluster_{n}.toml")
        with open(cluster, "w") as f:
            f.write(CLUSTER.format(n=n, steady=steady, late=late, failing=failing, horizon=horizon))
        for policy, block in POLICIES:
            stats = os.path.join(tmp, f"stats_{n}_{policy}_{block}.json")
            sim_args = ["--width", str(width), "--height", str(height), "--work-factor", str(work), "--frames", str(frames),
                        "--policy", policy, "--block", str(block), "--wait", "2", "--max-copies", "2", "--seed", "1"]
            st, events, sim_wall, wall, text = run_sim(args.farm, args.cost_map, cluster, sim_args, stats)
            first, end, drained = analyse(st)
            # Lower bound from `farm sim`: total work / total speed, never below the costliest block at the fastest worker.
            bound = float(re.search(r"Lower bound\s+([\d.]+) s", text).group(1))
            row = dict(workers=n, policy=policy, block=block, makespan_s=end, window_s=end - first, lower_bound_s=bound,
                       ratio=(end - first) / bound, tail_s=end - drained, blocks=st["blocks_completed"],
                       reassignments=st["reassignments"], halvings=sum(1 for d in st["decisions"] if d["to"] < d["from"]),
                       died=sum(1 for w in st["workers"] if w["died"]), events=events, sim_seconds=sim_wall,
                       events_per_s=events / sim_wall if sim_wall > 0 else 0, process_seconds=wall,
                       completed=st.get("completed", True))
            rows.append(row)
            print(f"{n:6d} workers {policy:8s} S0={block:3d}: window {row['window_s']:8.2f} s, bound {bound:7.2f} s "
                  f"(x{row['ratio']:.2f}), tail {row['tail_s']:6.2f} s, {events} events in {sim_wall:.2f} s "
                  f"({row['events_per_s'] / 1e6:.2f} M/s), {row['died']} died", flush=True)
    with open(os.path.join(out_dir, "scale_study.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, os.path.join(out_dir, "plots"))
    cmd = "tools/sim/scale_study.py --cost-map " + os.path.relpath(args.cost_map, ROOT) + (" --quick" if args.quick else "")
    with open(os.path.join(out_dir, "scale_study.md"), "w") as f:
        f.write(f"# Scale study (simulated)\n\nCommand: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"Image: {width}x{height}, {frames} frames, costs from `{os.path.relpath(args.cost_map, ROOT)}` rescaled, "
                f"x{work} work. Workers: speeds uniform in 0.1..1.0 (10x spread), one-way latency uniform in 0..100 ms, "
                f"100 Mbit/s; 5% join during the first {horizon} s, 5% fail silently during it. Wait 2 s, max copies 2, "
                "heartbeat 1 s x liveness 3.\n\n"
                "Lower bound = total work / total speed of every worker (failing ones included, so the bound is "
                "optimistic), never below the costliest block rendered at the fastest worker's speed. Tail = last result - last fresh assignment (the drain).\n\n"
                "| workers | policy | S0 | window (s) | lower bound (s) | window / bound | tail (s) | blocks | reassigned "
                "| halvings | died | events | sim time (s) | M events/s |\n|" + "---|" * 14 + "\n")
        for r in rows:
            f.write(f"| {r['workers']} | {r['policy']} | {r['block']} | {r['window_s']:.2f} | {r['lower_bound_s']:.2f} | "
                    f"{r['ratio']:.2f} | {r['tail_s']:.2f} | {r['blocks']} | {r['reassignments']} | {r['halvings']} | "
                    f"{r['died']} | {r['events']} | {r['sim_seconds']:.2f} | {r['events_per_s'] / 1e6:.2f} |\n")
        f.write("\n![window / bound](plots/scale_ratio.png)\n![tail](plots/scale_tail.png)\n")
    print(f"wrote {os.path.relpath(out_dir, ROOT)}/scale_study.md")
    return 0


def plot(rows, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for metric, label, name in (("ratio", "window / lower bound", "scale_ratio"), ("tail_s", "tail (s)", "scale_tail")):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for policy, block in POLICIES:
            pts = [(r["workers"], r[metric]) for r in rows if r["policy"] == policy and r["block"] == block]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{policy} S0={block}")
        ax.set_xscale("log")
        ax.set_xlabel("workers")
        ax.set_ylabel(label)
        ax.set_title(f"Simulated scale study: {label}")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, name + ".png"), dpi=120)
        plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
