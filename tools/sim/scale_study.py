#!/usr/bin/python3
"""Scale study of the scheduler with the simulator (`farm sim`), weak scaling: 2 to 10,000
workers, each job about 60 s long at its size, homogeneous and 10x-heterogeneous speeds on a LAN
and a WAN, three cost maps (chess2, flat, a path-traced Cornell box), every policy measured
against the honest lower bound (farm/control/makespan_bound.h).

  tools/sim/scale_study.py [--cost-map results/sim/chess2_640x480_spp8.costmap] [--quick]

Writes results/sim/scale_study.{csv,md} and results/sim/plots/scale_*.png (--quick: a small grid
into build/scale-quick, for CI). The grid and its constants are in tools/sim/scale_grid.py.
"""
import argparse
import concurrent.futures
import csv
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
from sim import scale_grid as g, scale_report  # noqa: E402

PT_MAP = "results/sim/cornell_320x240_spp32.costmap"
PT_MAP_COMMAND = ("build/farm/farm single scenes/cornell.toml -o /tmp/cornell.png --width 320 --height 240 "
                  "--spp 32 --threads 1 --cost-map " + PT_MAP)
# Scenarios (cluster, network) run at the largest N: all four at 10,000 workers would take about
# 40 minutes on 2 cores, so only the two extremes run there.
LARGEST_SCENARIOS = (("hetero", "wan"), ("homo", "lan"))
QUICK = dict(sizes=(10, 100), width=640, height=360, ideal_s=20.0, seeds=(1,), maps=("chess2", "flat"),
             scenarios=(("hetero", "wan"), ("homo", "lan")))
# What a master's preview (farm/costs/preview_cost_map.h: a quarter of the size, 1 spp) would
# measure of each map's scene: the factoring+preview column predicts block costs from these.
# The flat map is synthetic (no scene to preview); its preview is itself.
PREVIEW_MAPS = {"chess2": "results/sim/chess2_160x120_spp1.costmap",
                "cornell": "results/sim/cornell_80x60_spp1.costmap"}
PREVIEW_COMMANDS = {
    "chess2": "build/farm/farm single scenes/chess2.toml -o /tmp/p.png --width 160 --height 120 --spp 1 "
              "--threads 1 --cost-map results/sim/chess2_160x120_spp1.costmap",
    "cornell": "build/farm/farm single scenes/cornell.toml -o /tmp/p.png --width 80 --height 60 --spp 1 "
               "--threads 1 --cost-map results/sim/cornell_80x60_spp1.costmap"}
TIMEOUT_S = 900  # one sim's wall time before it counts as not completed

PATTERNS = {
    "completed": r"Completed\s+(yes|NO)",
    "makespan_s": r"Makespan \(master clock\)\s+(\S+) s",
    "bound_plain_s": r"Plain bound\s+(\S+) s \(total work",
    "work_s": r"total work (\S+) s",
    "bound_honest_s": r"Honest bound\s+(\S+) s",
    "blocks": r"Blocks\s+(\d+),",
    "reassignments": r"(\d+) reassigned",
    "late": r"(\d+) late",
    "halvings": r"(\d+) halvings",
    "lost": r"(\d+) workers lost",
    "events": r"Events\s+(\d+) in",
    "sim_seconds": r"Events\s+\d+ in (\S+) s",
}


def parse_output(text):
    """The figures of `farm sim`'s printout (its --stats JSON runs to 500 MB at 10,000 workers)."""
    out = {}
    for key, pattern in PATTERNS.items():
        m = re.search(pattern, text)
        if not m:
            raise ValueError(f"no {key} in farm sim's output:\n{text}")
        v = m.group(1)
        out[key] = v == "yes" if key == "completed" else (int(v) if v.isdigit() else float(v))
    return out


def run_one(job):
    """Runs one sim (in a pool process); returns its CSV row."""
    cmd = [job["farm"], "sim", "--cost-map", job["cost_map"], "--cluster", job["cluster_file"],
           "--width", str(job["width"]), "--height", str(job["height"]), "--frames", str(job["frames"]),
           "--work-factor", f"{job['work_factor']:.6g}", "--wait", str(g.WAIT_S), "--max-copies", str(g.MAX_COPIES),
           "--seed", str(job["seed"])] + job["policy_args"]
    t0 = time.monotonic()
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT_S)
        text, code = out.stdout, out.returncode
    except subprocess.TimeoutExpired:
        text, code = None, "timeout"
    row = {k: v for k, v in job.items() if k not in ("farm", "cost_map", "cluster_file", "policy_args")}
    row["process_seconds"] = time.monotonic() - t0
    if text is None or code not in (0, 1):
        row.update(completed=False, error=f"exit {code}: {' '.join(cmd)}\n{text or ''}"[-2000:])
        return row
    row.update(parse_output(text))
    ms, plain, honest = row["makespan_s"], row["bound_plain_s"], row["bound_honest_s"]
    row["ratio_honest"] = ms / honest if row["completed"] and 0 < honest < float("inf") else None
    row["ratio_plain"] = ms / plain if row["completed"] and plain > 0 else None
    return row


def build_jobs(args, maps, tmp, calibration_map):
    q = QUICK if args.quick else None
    sizes = q["sizes"] if q else g.SIZES
    width, height = (q["width"], q["height"]) if q else (g.WIDTH, g.HEIGHT)
    ideal = q["ideal_s"] if q else g.IDEAL_S
    scenarios = q["scenarios"] if q else [(c, n) for c in g.CLUSTERS for n in g.NETWORKS]
    jobs = []
    for n in sizes:
        seeds = g.SEEDS if n <= 1000 else g.SEEDS_LARGEST
        seeds = q["seeds"] if q else seeds
        for cluster, network in scenarios:
            if not q and n == max(sizes) and (cluster, network) not in LARGEST_SCENARIOS:
                continue
            cluster_file = os.path.join(tmp, f"{cluster}_{network}_{n}.toml")
            with open(cluster_file, "w") as f:
                f.write(g.cluster_toml(n, cluster, network, ideal))
            for seed in seeds:
                speed = total_speed(args.farm, cluster_file, seed, calibration_map)
                for name, path in maps.items():
                    mw, mh, frame_cost = g.cost_map_summary(path)
                    frames, factor = g.job_size(n, speed, frame_cost, mw * mh, width, height, ideal)
                    preview = os.path.join(ROOT, PREVIEW_MAPS[name]) if name in PREVIEW_MAPS else path
                    for p in g.POLICIES:
                        policy_args = [preview if a == g.PREVIEW_MAP else a for a in p.args()]
                        jobs.append(dict(map=name, cluster=cluster, network=network, workers=n, policy=p.label,
                                         sched_policy=p.policy, block=p.block,
                                         cost_model=any(a.startswith("--cost-model") for a in p.extra),
                                         seed=seed, width=width, height=height, frames=frames, work_factor=factor,
                                         ideal_s=ideal, total_speed=speed, farm=args.farm, cost_map=path,
                                         cluster_file=cluster_file, policy_args=policy_args))
    return jobs


def total_speed(farm, cluster_file, seed, cost_map):
    """The total speed of the cluster as `seed` draws it (a one-block sim prints it, 3 digits)."""
    out = subprocess.run([farm, "sim", "--cost-map", cost_map, "--cluster", cluster_file, "--width", "64",
                          "--height", "64", "--frames", "1", "--policy", "fixed", "--block", "64", "--seed", str(seed)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.search(r"\(total speed (\S+)\)", out.stdout)
    if not m:
        raise SystemExit(f"scale_study: no total speed in farm sim's output:\n{out.stdout}")
    return float(m.group(1))


def expected_cost(job):
    """A rough guess of a run's wall time, so the pool starts the longest first."""
    return job["workers"] * (128 / job["block"] if job["sched_policy"] == "fixed" else 4)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--cost-map", default=os.path.join(ROOT, "results/sim/chess2_640x480_spp8.costmap"),
                    help="the chess2 cost map (farm single --cost-map), rescaled to the study's image")
    ap.add_argument("--pt-map", default=os.path.join(ROOT, PT_MAP), help="a path-traced scene's cost map")
    ap.add_argument("--quick", action="store_true", help="a small grid in under a minute (CI)")
    ap.add_argument("--jobs", type=int, default=2, help="sims at once (default 2)")
    ap.add_argument("--out", help="output folder (default results/sim, or build/scale-quick with --quick)")
    ap.add_argument("--report-only", action="store_true",
                    help="no sims: remake the page and plots from OUT/scale_study.csv and its .meta.json")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(ROOT, "build/scale-quick" if args.quick else "results/sim")
    os.makedirs(os.path.join(out_dir, "plots"), exist_ok=True)
    csv_path = os.path.join(out_dir, "scale_study.csv")
    meta_path = os.path.join(out_dir, "scale_study.meta.json")
    if not args.report_only:
        run_grid(args, csv_path, meta_path)
    rows = g.add_vs_best_fixed(g.read_rows(csv_path))  # the CSV's own columns, from the same function
    with open(meta_path) as f:
        meta = json.load(f)
    scale_report.write_markdown(rows, os.path.join(out_dir, "scale_study.md"), meta)
    scale_report.plot(rows, os.path.join(out_dir, "plots"))
    failed = sum(1 for r in rows if not r["completed"])
    print(f"scale_study: {len(rows)} sims, {meta['wall_s'] / 60:.1f} min ({failed} did not complete: a result, "
          f"not an error); wrote {os.path.relpath(out_dir, ROOT)}/scale_study.md")
    crashed = [r for r in rows if r.get("error")]
    if crashed:
        print(f"scale_study: {len(crashed)} sims crashed, e.g.:\n{crashed[0]['error']}", file=sys.stderr)
        return 1
    return 0


def run_grid(args, csv_path, meta_path):
    """Every sim of the grid, two at once; writes the CSV (one row per sim) and the run's facts."""
    if not os.access(args.farm, os.X_OK):
        raise SystemExit(f"scale_study: no farm binary at {args.farm} (build it: ninja -C build farm)")
    tmp = tempfile.mkdtemp(prefix="farm_scale_")
    flat = os.path.join(tmp, "flat.costmap")
    with open(flat, "w") as f:
        f.write(g.flat_cost_map())
    maps = {"chess2": args.cost_map, "flat": flat, "cornell": args.pt_map}
    if args.quick:
        maps = {k: v for k, v in maps.items() if k in QUICK["maps"]}
    t0 = time.monotonic()  # the wall time reported includes the clusters' speed calibration
    jobs = sorted(build_jobs(args, maps, tmp, flat), key=expected_cost, reverse=True)
    print(f"scale_study: {len(jobs)} sims, {args.jobs} at once", flush=True)
    rows = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for done in concurrent.futures.as_completed([pool.submit(run_one, j) for j in jobs]):
            row = done.result()
            rows.append(row)
            r = row.get("ratio_honest")
            print(f"[{len(rows):4d}/{len(jobs)} {time.monotonic() - t0:6.0f} s] {row['map']:7s} {row['cluster']:6s} "
                  f"{row['network']} N={row['workers']:<5d} {row['policy']:13s} seed {row['seed']}: "
                  + (f"x{r:.3f} of the honest bound" if r else "DID NOT COMPLETE")
                  + f" ({row['process_seconds']:.1f} s)", flush=True)
    total = time.monotonic() - t0
    g.add_vs_best_fixed(rows)
    rows.sort(key=lambda r: (r["map"], r["cluster"], r["network"], r["workers"],
                             [p.label for p in g.POLICIES].index(r["policy"]), r["seed"]))
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=g.FIELDS)
        w.writeheader()
        w.writerows({k: _cell(r.get(k)) for k in g.FIELDS} for r in rows)
    cmd = "tools/sim/scale_study.py" + (" --quick" if args.quick else "") + \
        (f" --cost-map {os.path.relpath(args.cost_map, ROOT)}" if args.quick else "")
    meta = dict(command=cmd, date=f"{datetime.datetime.now():%Y-%m-%d %H:%M}", wall_s=total, jobs=args.jobs,
                commit=_commit(), maps={k: os.path.relpath(v, ROOT) if k != "flat" else None for k, v in maps.items()},
                quick=args.quick, pt_map_command=PT_MAP_COMMAND, preview_commands=PREVIEW_COMMANDS, ideal_s=QUICK["ideal_s"] if args.quick else g.IDEAL_S)
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def _cell(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


def _commit():
    """HEAD, and the last commit that changed the simulator's sources (what the results depend on)."""
    def git(*a):
        return subprocess.run(["git", "-C", ROOT] + list(a), stdout=subprocess.PIPE, text=True).stdout.strip()
    try:
        head, farm = git("rev-parse", "--short", "HEAD"), git("log", "-1", "--format=%h", "--", "farm", "renderer")
        dirty = git("status", "--porcelain", "--untracked-files=no", "farm", "renderer")
    except OSError:
        return "unknown"
    return f"{head} (farm/ and renderer/ as of {farm}{', with uncommitted changes' if dirty else ''})"


if __name__ == "__main__":
    sys.exit(main())
