#!/usr/bin/env python3
"""The default policy on issue 28's case: `farm sim` with no --policy and no --block, given the
preview's cost map as a real master measures it, against the honest bound, beside the paper's
halving (`seed`, the default before) and factoring without a cost model. Writes
results/sim/default_policy.md (and prints it).

The case: results/sim/chess2_640x480_spp8.costmap rescaled to 1920x1080, 5 frames, work factor
200; 1000 workers of speed 0.1..1, one-way latency 0..100 ms, 100 Mbit/s, start-up 0.2..2 s.
The preview map is results/sim/chess2_160x120_spp1.costmap (a quarter of the size, 1 spp, one
thread: what the master's preview render measures). Seeds 1..3.

  tools/sim/default_policy_check.py [--farm build/farm/farm] [--out results/sim/default_policy.md]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
from farmtools.sim_cluster import write_cluster  # noqa: E402

COST_MAP = "results/sim/chess2_640x480_spp8.costmap"
PREVIEW_MAP = "results/sim/chess2_160x120_spp1.costmap"
JOB = ["--width", "1920", "--height", "1080", "--frames", "5", "--work-factor", "200"]
# The cluster file (farmtools.sim_cluster.write_cluster's arguments).
CLUSTER = dict(comment="issue 28's WAN case: 1000 workers, speeds 0.1..1, one-way latency 0..100 ms, 100 Mbit/s",
               network={"latency_ms": (0, 100), "bandwidth_mbit": 100},
               groups=[{"name": "wan", "count": 1000, "speed": (0.1, 1), "startup": (0.2, 2)}])
# Rows: a label and the arguments that select the policy (nothing: the default).
ROWS = [
    ("default (no --policy), preview map", ["--cost-model-map", PREVIEW_MAP]),
    ("default (no --policy), no cost model", []),
    ("--policy seed, preview map", ["--policy", "seed", "--cost-model-map", PREVIEW_MAP]),
    ("--policy seed", ["--policy", "seed"]),
    ("--policy factoring --block 128, preview map", ["--policy", "factoring", "--block", "128",
                                                     "--cost-model-map", PREVIEW_MAP]),
]
SEEDS = (1, 2, 3)


def sim(farm, cluster, args, seed):
    cmd = [farm, "sim", "--cost-map", COST_MAP, "--cluster", cluster, "--seed", str(seed)] + JOB + args
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    ratio, makespan = (re.search(p, out) for p in (r"Makespan / honest bound\s+([0-9.]+)",
                                                   r"Makespan \(master clock\)\s+([0-9.]+) s"))
    if not ratio or not makespan:
        sys.exit("default_policy_check.py: `farm sim` did not print its makespan and bound:\n" + out)
    ratio, makespan = float(ratio.group(1)), float(makespan.group(1))
    head = out.splitlines()[0]
    return ratio, makespan, head


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results/sim/default_policy.md"))
    a = ap.parse_args()
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = write_cluster(os.path.join(tmp, "wan1000.toml"), **CLUSTER)
        lines = ["# The default policy on the 1000-worker WAN case (simulated)", "",
                 f"Command: `tools/sim/default_policy_check.py`  ",
                 f"Date: {time.strftime('%Y-%m-%d %H:%M')}", "",
                 "Case: `" + COST_MAP + "` rescaled to 1920x1080, 5 frames, `--work-factor 200`; 1000 workers of "
                 "speed 0.1..1, one-way latency 0..100 ms, 100 Mbit/s, start-up 0.2..2 s (cluster file in the script). "
                 "The preview map `" + PREVIEW_MAP + "` is what a real master's preview render measures (a quarter of "
                 "the size, 1 spp); the run itself costs what the full map says. Seeds " +
                 ", ".join(map(str, SEEDS)) + ".", "",
                 "| policy arguments | what `farm sim` ran | makespan / honest bound, per seed | median | makespan (s), median |",
                 "|---|---|---|---|---|"]
        for label, args in ROWS:
            runs = [sim(a.farm, cluster, args, seed) for seed in SEEDS]
            ratios = [r[0] for r in runs]
            ran = re.search(r"policy (\w+), block (\d+)", runs[0][2])
            lines.append(f"| {label} | {ran.group(1)}, block {ran.group(2)} | "
                         f"{' / '.join(f'{r:.3f}' for r in ratios)} | {statistics.median(ratios):.3f} | "
                         f"{statistics.median(r[1] for r in runs):.1f} |")
            print(lines[-1], flush=True)
    lines += ["", f"{len(ROWS) * len(SEEDS)} simulations, {time.time() - started:.0f} s wall."]
    text = "\n".join(lines) + "\n"
    with open(a.out, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
