#!/usr/bin/python3
"""Validation of the simulator against real runs on this machine: for each configuration, real
`farm master` + CPU-capped workers (some behind the delaying proxy), and `farm sim` on a cluster
file describing the same workers; predicted against measured render window.

  tools/sim/validate.py [--quick]

What the simulator is told (all measured beforehand, none taken from the run it predicts):
  - costs: a cost map of the same scene and settings from `farm single --threads 1 --cost-map`
    at full speed (speed 1.0 = one unthrottled core);
  - speeds: one calibration job per CPU quota with a single worker (cost map total / the
    worker's summed block render times), not the runs predicted;
  - startup: the fastest calibration worker's start-to-join time, divided by each speed;
  - result size: the compressed/raw ratio of that same calibration run;
  - latency: the proxy's configured one-way delay plus its measured floor (1.25 ms per direction,
    results/net_proxy_check.md); loopback 0.05 ms.
  - factoring's cost model: a preview's map (a quarter of the size, 1 spp), as the real master
    renders one before serving.
Writes results/sim/validation.{csv,md} (or build/validate-quick with --quick).
"""
import argparse
import csv
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools/experiments"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import cluster as cl  # noqa: E402
from farmtools.networks import NETWORK_RE, PRESETS  # noqa: E402

PROXY_FLOOR_MS = 1.25

# (name, cores per worker, network per worker or one for all, policy, block, wait)
CONFIGS = [
    ("1 worker, loopback", [1.0], "loopback", "fixed", 32, 1.0),
    ("2 workers, loopback", [0.8, 0.8], "loopback", "fixed", 32, 1.0),
    ("3 heterogeneous, loopback, seed", [0.8, 0.4, 0.2], "loopback", "seed", 64, 0.5),
    ("3 heterogeneous, loopback, adaptive", [0.8, 0.4, 0.2], "loopback", "adaptive", 64, 0.5),
    ("3 heterogeneous, 5 ms", [0.8, 0.4, 0.2], "5ms", "fixed", 32, 1.0),
    ("2 workers, dorm", [0.8, 0.8], "dorm", "fixed", 16, 1.0),
    ("1 worker at 0.5, 20 ms", [0.5], "20ms", "fixed", 32, 1.0),
    ("paper-like 4, lab + dorm, seed", [0.6, 0.4, 0.3, 0.15], ["lab", "lab", "dorm", "dorm"], "seed", 64, 0.5),
    ("3 heterogeneous, loopback, factoring", [0.8, 0.4, 0.2], "loopback", "factoring", 128, 0.75),
    ("paper-like 4, lab + dorm, factoring", [0.6, 0.4, 0.3, 0.15], ["lab", "lab", "dorm", "dorm"], "factoring", 128,
     0.75),
]


def link_of(network):
    """(one-way latency ms, jitter ms, bandwidth Mbit/s) the simulator is given for a network."""
    if network == "loopback":
        return 0.05, 0.0, 0.0
    if network in PRESETS:
        d, j, bw = PRESETS[network]
        return d + PROXY_FLOOR_MS, j, bw
    m = NETWORK_RE.match(network)
    return float(m.group(1)) + PROXY_FLOOR_MS, 0.0, float(m.group(2) or 0)


def window_of(stats):
    acc = [b for b in stats["blocks"] if b["outcome"] == "accepted"]
    return max(b["received"] for b in acc) - min(b["assigned"] for b in stats["blocks"])


def cluster_toml(speeds, networks, startup_full):
    lines = ["per_block_overhead_ms = 0.15", ""]
    for i, (s, net) in enumerate(zip(speeds, networks)):
        lat, jit, bw = link_of(net)
        lines += ["[[group]]", f'name = "w{i + 1}"', "count = 1", f"speed = {s:.6g}", "threads = 1", "prefetch = 1",
                  f"startup = {startup_full / s:.6g}", f"latency_ms = {lat:.6g}", f"jitter_ms = {jit:.6g}",
                  f"bandwidth_mbit = {bw:.6g}", ""]
    return "\n".join(lines)


def keep(folder, path, name):
    if folder:
        shutil.copyfile(path, os.path.join(folder, name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--keep", help="folder to keep every run's stats JSON in (real and simulated), for "
                    "tools/sim/compare_runs.py")
    args = ap.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    out_dir = args.out or os.path.join(ROOT, "build/validate-quick" if args.quick else "results/sim")
    os.makedirs(out_dir, exist_ok=True)
    configs = CONFIGS[:2] if args.quick else CONFIGS
    reps = 1 if args.quick else args.reps
    w, h, spp = (160, 120, 4) if args.quick else (640, 480, 8)
    tmp = tempfile.mkdtemp(prefix="farm_validate_")
    runner = cl.Runner(args.farm, tmp, 1.0, use_quota=True)  # speed = cores
    scene = os.path.join(ROOT, "scenes/chess2.toml")
    size = ["--width", str(w), "--height", str(h), "--spp", str(spp)]

    # 1. Cost map at full speed, one thread.
    cost_map = os.path.join(out_dir, f"chess2_{w}x{h}_spp{spp}.costmap")
    subprocess.run([args.farm, "single", scene, "-o", os.path.join(tmp, "map.png"), "--threads", "1",
                    "--cost-map", cost_map] + size, check=True, stdout=subprocess.DEVNULL)
    # The factoring policy's cost model: the real master renders a preview (a quarter of the
    # size, 1 spp, farm/costs/preview_cost_map.h); the simulator is given the same kind of map.
    preview_map = os.path.join(tmp, "preview.costmap")
    subprocess.run([args.farm, "single", scene, "-o", os.path.join(tmp, "preview.png"), "--cost-map", preview_map,
                    "--width", str(w // 4), "--height", str(h // 4), "--spp", "1"], check=True, stdout=subprocess.DEVNULL)
    # 2. Speeds of the quotas: one farm job with one worker under each quota (a separate
    # calibration run). A worker is slower than `farm single` under the same quota: its network
    # and ZeroMQ threads spend from the same CPU budget, and CFS throttles the whole group.
    with open(cost_map) as f:
        next(f)
        next(f)
        next(f)
        map_total = sum(float(x) for line in f for x in line.split())
    speeds = {}
    startup_full, payload_ratio = None, None
    for cores in sorted({c for _, cs, *_ in configs for c in cs}, reverse=True):
        st = runner.farm_run(scene, size + ["--policy", "fixed", "--block", "32"], os.path.join(tmp, "j.png"),
                             os.path.join(tmp, "j.json"), cl.Cluster("one", [cl.Node(cores)]))
        acc = [b for b in st["blocks"] if b["outcome"] == "accepted"]
        speeds[cores] = map_total / sum(b["render_seconds"] for b in acc)
        if startup_full is None:  # the fastest node: its start-to-join time and the payload ratio
            startup_full = max(0.05, min(w_["joined"] for w_ in st["workers"])) * speeds[cores]
            payload_ratio = sum(b["bytes"] for b in acc) / (3.0 * sum(b["width"] * b["height"] for b in acc))
        print(f"speed of a worker on {cores:g} cores: {speeds[cores]:.3f}")
    print(f"worker start-to-join at full speed: {startup_full:.3f} s; zstd payload ratio {payload_ratio:.3f}")

    rows = []
    for index, (name, cores, network, policy, block, wait) in enumerate(configs):
        networks = network if isinstance(network, list) else [network] * len(cores)
        nodes = [cl.Node(c, n) for c, n in zip(cores, networks)]
        sched = ["--policy", policy, "--block", str(block), "--wait", f"{wait:g}", "--max-copies", "2"]
        real = []
        for rep in range(reps):
            st = runner.farm_run(scene, size + sched, os.path.join(tmp, "r.png"), os.path.join(tmp, "r.json"),
                                 cl.Cluster(name, nodes))
            real.append(window_of(st))
            keep(args.keep, os.path.join(tmp, "r.json"), f"{index + 1}_real_{rep + 1}.json")
        cluster_file = os.path.join(tmp, "cluster.toml")
        with open(cluster_file, "w") as f:
            f.write(cluster_toml([speeds[c] for c in cores], networks, startup_full))
        pred = []
        for seed in (1, 2, 3):
            sim_json = os.path.join(tmp, "sim.json")
            subprocess.run([args.farm, "sim", "--cost-map", cost_map, "--cluster", cluster_file, "--stats", sim_json,
                            "--seed", str(seed), "--payload-ratio", f"{payload_ratio:.4f}"] + sched
                           + (["--cost-model-map", preview_map] if policy == "factoring" else []),
                           check=True, stdout=subprocess.DEVNULL)
            keep(args.keep, sim_json, f"{index + 1}_sim_{seed}.json")
            with open(sim_json) as f:
                pred.append(window_of(json.load(f)))
        m_real, m_pred = statistics.median(real), statistics.median(pred)
        err = (m_pred - m_real) / m_real * 100
        rows.append(dict(config=name, cores=" ".join(f"{c:g}" for c in cores), network=",".join(sorted(set(networks))),
                         policy=policy, block=block, wait=wait, measured_s=m_real,
                         measured_range=f"{min(real):.2f}..{max(real):.2f}", predicted_s=m_pred, error_pct=err))
        print(f"{name:40s} measured {m_real:6.2f} s ({min(real):.2f}..{max(real):.2f})  predicted {m_pred:6.2f} s  "
              f"error {err:+.1f}%", flush=True)
    with open(os.path.join(out_dir, "validation.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    mae = statistics.mean(abs(r["error_pct"]) for r in rows)
    worst = max(abs(r["error_pct"]) for r in rows)
    cmd = "tools/sim/validate.py" + (" --quick" if args.quick else "")
    with open(os.path.join(out_dir, "validation.md"), "w") as f:
        f.write(f"## Simulator against real runs\n\nCommand: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"chess2 {w}x{h}, {spp} spp; real runs: median of {reps}; predictions: median of 3 seeds. Speeds "
                f"of one worker on a quota (calibration jobs): " + ", ".join(f"{c:g} cores = {s:.3f}" for c, s in sorted(speeds.items()))
                + f"; start-to-join at full speed {startup_full:.2f} s; compressed/raw payload {payload_ratio:.3f}.\n\n"
                "| configuration | cores | network | policy | block | wait | measured window (s) | range | predicted (s) "
                "| error |\n|" + "---|" * 10 + "\n")
        for r in rows:
            f.write(f"| {r['config']} | {r['cores']} | {r['network']} | {r['policy']} | {r['block']} | {r['wait']:g} | "
                    f"{r['measured_s']:.2f} | {r['measured_range']} | {r['predicted_s']:.2f} | {r['error_pct']:+.1f}% |\n")
        f.write(f"\nMean absolute error {mae:.1f}% (target <= 5%), worst {worst:.1f}% (target <= 10%).\n")
    print(f"mean absolute error {mae:.1f}%, worst {worst:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
