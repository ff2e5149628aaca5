#!/usr/bin/env python3
"""Does the preview predict where an adaptively sampled render's time goes? (issue 41, item 3)

With adaptive sampling a pixel's cost is the samples it takes, which its noise decides: smooth sky
stops at the first check, glass and soft shadows go on to spp. The master's preview
(farm/costs/preview_cost_map.cpp) then renders a quarter-size frame at a few samples with the
variance pass, predicts each pixel's samples from its error (rt::AdaptiveSchedule::
predicted_samples) and scales each tile's measured cost by them. This compares, per block of 16, 32
and 64 px, the block costs that preview predicts (`farm plan --cost-map`) with those measured in the
adaptive render itself (`farm single --cost-map`, 4 px tiles, thread CPU seconds, one thread), beside
what the preview predicted before it knew of adaptive sampling (the plain preview of the same scene
without --noise-threshold: every pixel at spp), a second measured render (the noise floor) and a
uniform map.

Usage: tools/bench/adaptive_cost_prediction.py [--farm build/farm/farm] [--repeats 2]
Writes results/adaptive_cost_prediction.md.
"""
import argparse, datetime, math, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cost_map_scaling as cms  # noqa: E402  (CostMap, tile_minimum, compare)
from farmtools import ROOT  # noqa: E402

CASES = [  # scene, width, height, spp, threshold
    ("scenes/chess2.toml", 320, 240, 128, 0.03),
    ("scenes/cornell.toml", 240, 240, 128, 0.03),
]
BLOCKS = (16, 32, 64)
TILE = 4


def single(farm, tmp, case, tag):
    scene, w, h, spp, t = case
    path = os.path.join(tmp, tag + ".txt")
    out = subprocess.run([farm, "single", os.path.join(ROOT, scene), "-o", os.path.join(tmp, tag + ".png"), "--width",
                          str(w), "--height", str(h), "--spp", str(spp), "--noise-threshold", str(t), "--threads", "1",
                          "--cost-map", path, "--cost-tile", str(TILE)],
                         check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    return cms.CostMap.read(path), float(re.search(r"Render time +([0-9.]+) s", out).group(1))


def plan(farm, tmp, case, tag, adaptive):
    scene, w, h, spp, t = case
    cluster = os.path.join(tmp, "cluster.toml")
    with open(cluster, "w") as f:
        f.write("[[group]]\ncount = 2\nspeed = 1\n")
    path = os.path.join(tmp, tag + ".txt")
    cmd = [farm, "plan", os.path.join(ROOT, scene), "--width", str(w), "--height", str(h), "--spp", str(spp),
           "--cluster", cluster, "--cost-map", path, "--threads", "1"]
    if adaptive:
        cmd += ["--noise-threshold", str(t)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    m = cms.CostMap.read(path)
    return m, m.note


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="farm_adaptive_costs_")
    lines = []
    for case in CASES:
        scene, w, h, spp, t = case
        cms.FULL = (w, h, spp)  # compare() and uniform_map() read the full size from here
        name = os.path.basename(scene).split(".")[0]
        runs = {"a": [], "b": []}
        for i in range(args.repeats):  # interleaved: a slow stretch of time hits both alike
            for k in runs:
                runs[k].append(single(args.farm, tmp, case, f"{name}_{k}{i}"))
        measured = cms.tile_minimum([r[0] for r in runs["a"]])
        again = cms.tile_minimum([r[0] for r in runs["b"]])
        render_s = min(r[1] for r in runs["a"] + runs["b"])
        new, new_note = plan(args.farm, tmp, case, f"{name}_plan_adaptive", True)
        old, old_note = plan(args.farm, tmp, case, f"{name}_plan_plain", False)
        uniform = cms.uniform_map(measured.total())
        lines.append(f"\n## {name} {w}x{h}, spp {spp}, noise threshold {t}\n\n"
                     f"Adaptive render: {render_s:.2f} s, cost map total {measured.total():.2f} thread CPU s. "
                     f"Adaptive preview: *{new_note}*. Plain preview: *{old_note}*.\n\n"
                     "| prediction | total error | block | r | med | p90 | shape med | shape p90 |\n"
                     "|---|---|---|---|---|---|---|---|\n")
        for label, pred in (("second adaptive render (noise floor)", again), ("preview, adaptive-aware (now)", new),
                            ("preview as before (every pixel at spp)", old), ("uniform (no map, measured total)", uniform)):
            total = pred.total() / measured.total() - 1
            for b in BLOCKS:
                c = cms.compare(pred, measured, b)
                r = "-" if math.isnan(c["r"]) else f"{c['r']:.3f}"
                lines.append(f"| {label} | {total:+.1%} | {b} ({c['blocks']}) | {r} | {c['med']:.1%} | {c['p90']:.1%} "
                             f"| {c['shape_med']:.1%} | {c['shape_p90']:.1%} |\n")
    cmd = "tools/bench/adaptive_cost_prediction.py" + ("" if args.farm == ap.get_default("farm") else f" --farm {args.farm}")
    cmd += "" if args.repeats == 2 else f" --repeats {args.repeats}"
    md = os.path.join(ROOT, "results/adaptive_cost_prediction.md")
    kept = ""
    if os.path.exists(md) and "## What it means" in open(md).read():
        text = open(md).read()
        kept = text[text.index("## What it means"):]
    with open(md, "w") as f:
        f.write("# Does the preview predict an adaptive render's block costs?\n\n"
                f"Command: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"Machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at the end; every render with "
                f"`--threads 1`; each measured render {args.repeats} times (interleaved with the second), each tile's "
                "smallest time kept.\n\n"
                "Columns as in [cost_map_scaling.md](cost_map_scaling.md): *r* the Pearson correlation of predicted and "
                "measured block costs; *med*/*p90* the median and 90th percentile of |predicted - measured| / measured "
                "per block; *shape* the same with the prediction rescaled to the measured total (where the time goes, "
                "which is what the factoring policy uses: the scheduler measures worker speeds in the map's unit).\n")
        f.write("".join(lines))
        f.write("\n" + (kept or "## What it means\n\n(to be written)\n"))
    print(open(md).read())


if __name__ == "__main__":
    main()
