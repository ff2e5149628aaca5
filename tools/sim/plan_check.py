#!/usr/bin/python3
"""Does `farm plan` recommend settings that real runs confirm? On the experiments' paper6 cluster
(chess2 640x480, 8 spp), ask `farm plan` for policy/block/wait, run the recommendation for real
(tools/experiments sweep machinery, experiment "plancheck" in results/experiments/sweep.csv) and
rank it among every configuration the sweep measured on the same scene, size and cluster.

  tools/sim/plan_check.py [--reps 3]

The cluster file given to the planner is built from measurements made before (calibration rows of
the sweep CSV for the quota'd speeds, one unthrottled `farm single` for the full-core speed), not
from the runs it is judged against. Writes results/sim/plan_check.md.
"""
import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from experiments import cluster as cl  # noqa: E402
from experiments.sweep import CALIBRATION_SCENE, Sweep  # noqa: E402
from farmtools import ROOT  # noqa: E402
from farmtools.sim_cluster import write_cluster  # noqa: E402
from farmtools.sweep_data import group, median, read_rows  # noqa: E402
from sim.validate import link_of  # noqa: E402  (same network model as the validation)

STARTUP_FULL = 0.3  # seconds from start to join of a full-speed worker (see validation.md)


def measured_configs(csv_path, w, spp):
    """[(median window, (policy, block, wait))], fastest first, of every configuration the sweep
    measured on the same scene, size, spp and cluster (wait 1 where it plays no part)."""
    rows = [r for r in read_rows(csv_path)
            if r["mode"] == "farm" and r["experiment"] in ("heatmap", "resolution", "scenes", "waitsearch")
            and r["scene"] == "chess2" and r["width"] == str(w) and r["spp"] == str(spp) and r["cluster"] == "paper6"]
    return sorted((median(v, "window_s"), (p, int(b), float(wt or 1)))
                  for (p, b, wt), v in group(rows, ("policy", "block", "wait")).items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--csv", default=os.path.join(ROOT, "results/experiments/sweep.csv"))
    args = ap.parse_args()
    ref, clusters = cl.load_clusters()
    tmp = tempfile.mkdtemp(prefix="farm_plancheck_")
    runner = cl.Runner(args.farm, tmp, ref)
    sweep = Sweep(args.csv, runner, os.path.join(ROOT, "scenes"), clusters)
    scene, cw, ch, cspp = CALIBRATION_SCENE
    # Full-core speed of the calibration render, to express the quotas in the planner's units.
    full = runner
    full.use_quota = False
    t_full = statistics.median(full.single(os.path.join(ROOT, "scenes", scene + ".toml"),
                                           ["--width", str(cw), "--height", str(ch), "--spp", str(cspp)],
                                           os.path.join(tmp, "c.png"), os.path.join(tmp, "c.json"))["seconds"]["render"]
                               for _ in range(2))
    full.use_quota = True
    paper6 = clusters["paper6"]
    groups = []
    for i, node in enumerate(paper6.nodes):
        t_node = float(sweep.rows[f"calibration|speed{node.speed:g}|ref{ref:g}"]["window_s"])
        speed = t_full / t_node
        lat, jit, bw = link_of(node.network)
        groups.append({"name": f"n{i + 1}", "speed": speed, "startup": STARTUP_FULL / speed,
                       "latency_ms": float(lat), "jitter_ms": float(jit), "bandwidth_mbit": float(bw)})
    cluster_file = write_cluster(os.path.join(tmp, "paper6.toml"), groups, per_block_overhead_ms=0.15)
    w, h, spp = 640, 480, 8
    out = subprocess.run([args.farm, "plan", os.path.join(ROOT, "scenes/chess2.toml"), "--width", str(w), "--height",
                          str(h), "--spp", str(spp), "--cluster", cluster_file, "--top", "5"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True).stdout
    print(out)
    m = re.search(r"--policy (\w+) --block (\d+)(?: --wait ([\d.]+))?\s+\(predicted render window ([\d.]+) s\)", out)
    policy, block, wait, predicted = m.group(1), int(m.group(2)), float(m.group(3) or 1), float(m.group(4))
    meds = measured_configs(args.csv, w, spp)
    # This machine drifts by 10-30% over an hour, so the recommendation is judged side by side
    # with the sweep's best configuration and the plain fixed 32, interleaved, in one session.
    contenders = {"recommended": (policy, block, wait), "sweep's best": meds[0][1], "fixed 32": ("fixed", 32, 1.0)}
    real = {name: [] for name in contenders}
    for rep in range(args.reps):
        for name, (p, b, wt) in contenders.items():
            real[name].append(float(sweep.point("plancheck", "chess2", w, h, spp, p, b, wt, "paper6", "cluster",
                                                rep)["window_s"]))
    med = {name: statistics.median(v) for name, v in real.items()}
    with open(os.path.join(ROOT, "results/sim/plan_check.md"), "w") as f:
        f.write(f"## Does `farm plan` pick settings the sweep confirms?\n\nCommand: `tools/sim/plan_check.py --reps "
                f"{args.reps}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \nchess2 {w}x{h}, {spp} spp, the "
                "paper6 cluster described to the planner from calibration measurements (speeds in full-core units: "
                + ", ".join(f"{g['speed']:.6g}" for g in groups) + ").\n\n```\n" + out.strip()
                + "\n```\n\nReal runs, interleaved, median of " + str(args.reps) + ":\n\n"
                "| configuration | policy | S0 | wait | runs (s) | median window (s) |\n|---|---|---|---|---|---|\n")
        for name, (p, b, wt) in contenders.items():
            f.write(f"| {name} | {p} | {b} | {wt:g} | {', '.join(f'{x:.2f}' for x in real[name])} | "
                    f"{med[name]:.2f} |\n")
        rec, best = med["recommended"], med["sweep's best"]
        f.write(f"\nPredicted {predicted:.2f} s for the recommendation ({(predicted / rec - 1) * 100:+.1f}% against "
                f"its measured median). The recommendation is {(rec / best - 1) * 100:+.1f}% against "
                f"the sweep's best configuration and {(rec / med['fixed 32'] - 1) * 100:+.1f}% against fixed 32, "
                f"measured side by side. The sweep had measured {len(meds)} configurations here, from "
                f"{meds[0][0]:.2f} to {meds[-1][0]:.2f} s (an hour earlier).\n")
    print("side by side: " + ", ".join(f"{k} {v:.2f} s" for k, v in med.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
