#!/usr/bin/python3
"""Validation of the simulator against real runs on this machine: for each configuration, real
`farm master` + CPU-capped workers (some behind the delaying proxy), and `farm sim` on a cluster
file describing the same workers; predicted against measured render window.

  tools/sim/validate.py [--quick]

What the simulator is told (all measured beforehand, none taken from the run it predicts):
  - costs: a cost map of the same scene and settings from `farm single --threads 1 --cost-map`
    at full speed (speed 1.0 = one unthrottled core);
  - per CPU quota, from calibration jobs with a single worker on that quota (not the runs
    predicted; one before the configurations, one halfway and one after, averaged, because this
    shared machine's speed under a quota drifts by up to 25% within minutes): its speed (cost map total / the worker's summed block render times), its
    start-to-join time, and its per-block overhead (the render window not spent rendering, per
    block). A quota throttles the farm's own per-block work more than in proportion (0.11 ms at
    one core, 2-13 ms at 0.15), so the simulator is given each quota's measured figure;
  - result size: the compressed/raw ratio of the fastest calibration run;
  - latency: the proxy's configured one-way delay plus its measured floor (1.25 ms per direction,
    results/net_proxy_check.md); loopback 0.05 ms.
  - factoring's cost model: a preview's map (a quarter of the size, 1 spp), as the real master
    renders one before serving.
Two models of a quota'd worker are predicted side by side:
  - plain: the worker renders at its calibrated speed whenever it is busy, and every gap between
    blocks costs its time;
  - quota: the kernel's bandwidth control (farm sim's cpu_quota, sim/quota_clock.h): a thread at
    full speed that may run `cores` x period CPU seconds per period (tools/experiments/cpu_quota.py's
    period), so idle time within a period is free. Its full speed and per-block CPU come from
    calibration jobs at two block sizes (32 and 16): window x cores = cost / speed + blocks x
    per-block CPU, solved for both.
Writes results/sim/validation.{csv,md} (or build/validate-quick with --quick).
"""
import argparse
import csv
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from experiments import cluster as cl  # noqa: E402
from experiments.cpu_quota import period_for  # noqa: E402
from farmtools import ROOT  # noqa: E402
from farmtools.networks import NETWORK_RE, PRESETS  # noqa: E402
from farmtools.run_window import accepted_blocks, run_window  # noqa: E402
from farmtools.sim_cluster import write_cluster  # noqa: E402

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
    ("2 workers, loopback, factoring", [0.8, 0.8], "loopback", "factoring", 128, 0.75),
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


def cluster_groups(quotas, networks, cores=None):
    """One [[group]] of one worker each. `quotas`: per worker, its quota's calibration (speed,
    startup s, overhead s per block); with `cores` (their quotas), the quota model: `quotas` then
    come from quota_calibration."""
    groups = []
    for i, (q, net) in enumerate(zip(quotas, networks)):
        lat, jit, bw = link_of(net)
        g = {"name": f"w{i + 1}", "count": 1, "speed": q["speed"], "threads": 1, "prefetch": 1,
             "startup": q["startup"], "block_overhead_ms": q["overhead"] * 1e3}
        if cores is not None:
            g.update(cpu_quota=float(cores[i]), quota_period_ms=period_for(cores[i]) / 1000)
        g.update(latency_ms=float(lat), jitter_ms=float(jit), bandwidth_mbit=float(bw))
        groups.append(g)
    return groups


def quota_calibration(runs32, runs16, map_total, cores):
    """Full (unthrottled) speed and per-block CPU of a worker on `cores`, from lone-worker jobs at
    two block sizes: window x cores = map_total / speed + blocks x overhead, for each."""
    def mean_of(runs):
        n = statistics.mean(len(accepted_blocks(st)) for st in runs)
        return n, statistics.mean(run_window(st) for st in runs) * cores
    n32, cpu32 = mean_of(runs32)
    n16, cpu16 = mean_of(runs16)
    overhead = max(0.0, (cpu16 - cpu32) / (n16 - n32))
    render = max(1e-9, cpu32 - n32 * overhead)
    return {"speed": map_total / render, "overhead": overhead,
            "startup": statistics.mean(st["workers"][0]["joined"] for st in runs32 + runs16)}


def calibration(stats_list, map_total):
    """Speed, start-to-join and per-block overhead of the lone worker of calibration runs."""
    render, overhead, startup = 0.0, [], []
    for st in stats_list:
        acc = accepted_blocks(st)
        r = sum(b["render_seconds"] for b in acc)
        render += r
        overhead.append(max(0.0, run_window(st) - r) / len(acc))
        startup.append(st["workers"][0]["joined"])
    return {"speed": map_total * len(stats_list) / render, "startup": statistics.mean(startup),
            "overhead": statistics.mean(overhead)}


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
    # Speeds of the quotas: farm jobs with one worker under each quota (separate calibration
    # runs). A worker is slower than `farm single` under the same quota: its network and ZeroMQ
    # threads spend from the same CPU budget, and CFS throttles the whole group.
    with open(cost_map) as f:
        next(f)
        next(f)
        next(f)
        map_total = sum(float(x) for line in f for x in line.split())
    all_cores = sorted({c for _, cs, *_ in configs for c in cs}, reverse=True)
    calibration_runs = {c: [] for c in all_cores}
    calibration16_runs = {c: [] for c in all_cores}  # for the quota model's per-block CPU

    def calibrate():
        for cores in all_cores:
            for block, runs in (("32", calibration_runs), ("16", calibration16_runs)):
                runs[cores].append(runner.farm_run(
                    scene, size + ["--policy", "fixed", "--block", block], os.path.join(tmp, "j.png"),
                    os.path.join(tmp, "j.json"), cl.Cluster("one", [cl.Node(cores)])))

    # 2. The real runs, with calibration passes before, halfway and after.
    calibrate()
    reals = []
    for index, (name, cores, network, policy, block, wait) in enumerate(configs):
        if index == len(configs) // 2 and not args.quick:
            calibrate()
        networks = network if isinstance(network, list) else [network] * len(cores)
        nodes = [cl.Node(c, n) for c, n in zip(cores, networks)]
        sched = ["--policy", policy, "--block", str(block), "--wait", f"{wait:g}", "--max-copies", "2"]
        real = []
        for rep in range(reps):
            st = runner.farm_run(scene, size + sched, os.path.join(tmp, "r.png"), os.path.join(tmp, "r.json"),
                                 cl.Cluster(name, nodes))
            real.append(run_window(st))
            keep(args.keep, os.path.join(tmp, "r.json"), f"{index + 1}_real_{rep + 1}.json")
        reals.append(real)
        print(f"{name:40s} measured {statistics.median(real):6.2f} s ({min(real):.2f}..{max(real):.2f})", flush=True)
    if not args.quick:
        calibrate()
    quotas = {c: calibration(runs, map_total) for c, runs in calibration_runs.items()}
    full = {c: quota_calibration(calibration_runs[c], calibration16_runs[c], map_total, c) for c in all_cores}
    acc = accepted_blocks(calibration_runs[all_cores[0]][0])  # the fastest node
    payload_ratio = sum(b["bytes"] for b in acc) / (3.0 * sum(b["width"] * b["height"] for b in acc))
    for cores in all_cores:
        q = quotas[cores]
        speeds = ", ".join(f"{calibration([r], map_total)['speed']:.3f}" for r in calibration_runs[cores])
        print(f"a worker on {cores:g} cores: speed {q['speed']:.3f} (passes: {speeds}), start-to-join "
              f"{q['startup']:.2f} s, {q['overhead'] * 1e3:.2f} ms per block besides rendering; quota model: "
              f"full speed {full[cores]['speed']:.3f}, {full[cores]['overhead'] * 1e3:.2f} ms CPU per block", flush=True)
    print(f"zstd payload ratio {payload_ratio:.3f}")

    # 3. The predictions.
    rows = []
    for index, (name, cores, network, policy, block, wait) in enumerate(configs):
        networks = network if isinstance(network, list) else [network] * len(cores)
        sched = ["--policy", policy, "--block", str(block), "--wait", f"{wait:g}", "--max-copies", "2"]
        real = reals[index]
        m_real = statistics.median(real)
        preds = {}
        for model, groups in (("plain", cluster_groups([quotas[c] for c in cores], networks)),
                              ("quota", cluster_groups([full[c] for c in cores], networks, cores))):
            cluster_file = write_cluster(os.path.join(tmp, f"cluster_{model}.toml"), groups)
            pred = []
            for seed in (1, 2, 3):
                sim_json = os.path.join(tmp, "sim.json")
                subprocess.run([args.farm, "sim", "--cost-map", cost_map, "--cluster", cluster_file, "--stats",
                                sim_json, "--seed", str(seed), "--payload-ratio", f"{payload_ratio:.4f}"] + sched
                               + (["--cost-model-map", preview_map] if policy == "factoring" else []),
                               check=True, stdout=subprocess.DEVNULL)
                keep(args.keep, sim_json, f"{index + 1}_sim_{model}_{seed}.json")
                with open(sim_json) as f:
                    pred.append(run_window(json.load(f)))
            preds[model] = statistics.median(pred)
        err = {m: (p - m_real) / m_real * 100 for m, p in preds.items()}
        rows.append(dict(config=name, cores=" ".join(f"{c:g}" for c in cores), network=",".join(sorted(set(networks))),
                         policy=policy, block=block, wait=wait, measured_s=m_real,
                         measured_range=f"{min(real):.2f}..{max(real):.2f}", predicted_s=preds["plain"],
                         error_pct=err["plain"], predicted_quota_s=preds["quota"], error_quota_pct=err["quota"]))
        print(f"{name:40s} measured {m_real:6.2f} s ({min(real):.2f}..{max(real):.2f})  predicted {preds['plain']:6.2f} s"
              f" ({err['plain']:+.1f}%), quota model {preds['quota']:6.2f} s ({err['quota']:+.1f}%)", flush=True)
    with open(os.path.join(out_dir, "validation.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    summary = {}
    for model, key in (("plain", "error_pct"), ("quota", "error_quota_pct")):
        summary[model] = (statistics.mean(abs(r[key]) for r in rows), max(abs(r[key]) for r in rows))
    cmd = "tools/sim/validate.py" + (" --quick" if args.quick else "")
    with open(os.path.join(out_dir, "validation.md"), "w") as f:
        f.write(f"## Simulator against real runs\n\nCommand: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"chess2 {w}x{h}, {spp} spp; real runs: median of {reps}; predictions: median of 3 seeds. "
                f"Compressed/raw payload {payload_ratio:.3f}. One worker on a quota (calibration jobs, not the runs "
                "predicted). Plain model: speed = cost map total / summed block render times, overhead = window "
                "not spent rendering, per block (fixed 32). Quota model: full speed and CPU per block from fixed 32 "
                "and 16 (see the script's docstring).\n\n"
                "| cores | speed | start-to-join (s) | per-block overhead (ms) | quota model: full speed "
                "| CPU per block (ms) |\n|---|---|---|---|---|---|\n"
                + "".join(f"| {c:g} | {q['speed']:.3f} | {q['startup']:.2f} | {q['overhead'] * 1e3:.2f} | "
                          f"{full[c]['speed']:.3f} | {full[c]['overhead'] * 1e3:.2f} |\n"
                          for c, q in sorted(quotas.items())) + "\n"
                "| configuration | cores | network | policy | block | wait | measured window (s) | range | predicted, "
                "plain (s) | error | predicted, quota (s) | error |\n|" + "---|" * 12 + "\n")
        for r in rows:
            f.write(f"| {r['config']} | {r['cores']} | {r['network']} | {r['policy']} | {r['block']} | {r['wait']:g} | "
                    f"{r['measured_s']:.2f} | {r['measured_range']} | {r['predicted_s']:.2f} | {r['error_pct']:+.1f}% | "
                    f"{r['predicted_quota_s']:.2f} | {r['error_quota_pct']:+.1f}% |\n")
        for model, (mae, worst) in summary.items():
            f.write(f"\n{model.capitalize()} model: mean absolute error {mae:.1f}% (target <= 5%), worst {worst:.1f}% "
                    "(target <= 10%).\n")
    for model, (mae, worst) in summary.items():
        print(f"{model} model: mean absolute error {mae:.1f}%, worst {worst:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
