#!/usr/bin/env python3
"""How well does a cheap preview's cost map predict the full render's block costs?

Renders cost maps (`farm single --cost-map`, 4 px tiles, one thread) of scenes/chess2.toml at the
full setting (640x480, spp 8) and at cheap previews, scales each preview map to the full size with
the same algorithm as CostMap::scaled() (farm/costs/cost_map.cpp, re-implemented below), and compares
predicted with measured block costs for blocks of 16, 32 and 64 px. A second full render gives the
noise floor (run-to-run timing noise), and "uniform" (every pixel costs the same) the baseline a
map must beat.

Every setting is rendered --repeats times, interleaved, and each tile keeps its smallest time:
on a shared (virtual) machine another process slows whole stretches of a render (measured while
another process compiled: identical renders took 3.5 to 5.5 s, bands of rows off by up to a
third), and a slowdown only ever adds time. Writes results/cost_map_scaling.md; a "## What it means" section already in that
file is kept.

Usage: tools/bench/cost_map_scaling.py [--farm build/farm/farm] [--repeats 3]
"""
import argparse, bisect, datetime, math, os, re, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
SCENE = "scenes/chess2.toml"
FULL = (640, 480, 8)
PREVIEWS = [(160, 120, 2), (320, 240, 2), (160, 120, 8)]
BLOCKS = (16, 32, 64)
TILE = 4


class CostMap:
    def __init__(self, width, height, tile, frames=1):
        self.width, self.height, self.tile, self.frames = width, height, tile, frames
        self.columns, self.rows = -(-width // tile), -(-height // tile)
        self.seconds = [[0.0] * self.columns for _ in range(self.rows)]  # frame 1 only
        self.note = ""

    def tile_pixels(self, c, r):
        return min(self.tile, self.width - c * self.tile) * min(self.tile, self.height - r * self.tile)

    def total(self):
        return sum(map(sum, self.seconds))

    def cost(self, x, y, w, h):
        t, s = self.tile, 0.0
        for r in range(y // t, (y + h - 1) // t + 1):
            oy = min(y + h, (r + 1) * t) - max(y, r * t)
            for c in range(x // t, (x + w - 1) // t + 1):
                ox = min(x + w, (c + 1) * t) - max(x, c * t)
                s += self.seconds[r][c] * ox * oy / self.tile_pixels(c, r)
        return s

    @staticmethod
    def read(path):
        with open(path) as f:
            lines = f.read().split("\n")
        assert lines[0] == "farm-cost-map 1", path
        h = lines[1].split()
        m = CostMap(int(h[1]), int(h[3]), int(h[5]), int(h[7]))
        m.note = lines[2][5:]
        for r in range(m.rows):  # the first frame
            m.seconds[r] = [float(v) for v in lines[3 + r].split()]
        return m

    def scaled(self, width, height, work_factor, tile):
        """CostMap::scaled(): per-pixel density sampled bilinearly at the new tile centres."""
        out = CostMap(width, height, tile)
        ocx, ocy = centres(self.width, self.tile), centres(self.height, self.tile)
        ncx, ncy = centres(width, tile), centres(height, tile)
        dens = [[self.seconds[r][c] / self.tile_pixels(c, r) for c in range(self.columns)] for r in range(self.rows)]
        for r in range(out.rows):
            y0, y1, wy = lerp_at(ocy, ncy[r] * self.height / height)
            for c in range(out.columns):
                x0, x1, wx = lerp_at(ocx, ncx[c] * self.width / width)
                top = (1 - wx) * dens[y0][x0] + wx * dens[y0][x1]
                bottom = (1 - wx) * dens[y1][x0] + wx * dens[y1][x1]
                out.seconds[r][c] = ((1 - wy) * top + wy * bottom) * out.tile_pixels(c, r)
        target = self.total() * (width * height) / (self.width * self.height) * work_factor
        s = out.total()
        for r in range(out.rows):
            for c in range(out.columns):
                out.seconds[r][c] = (out.seconds[r][c] * target / s if s > 0
                                     else target * out.tile_pixels(c, r) / (width * height))
        return out


def centres(extent, tile):
    return [0.5 * (s + min(extent, s + tile)) for s in range(0, extent, tile)]


def lerp_at(cs, pos):
    i = bisect.bisect_right(cs, pos)
    if i == 0:
        return 0, 0, 0.0
    if i == len(cs):
        return len(cs) - 1, len(cs) - 1, 0.0
    return i - 1, i, (pos - cs[i - 1]) / (cs[i] - cs[i - 1])


def tile_minimum(maps):
    out = CostMap(maps[0].width, maps[0].height, maps[0].tile)
    out.seconds = [[min(m.seconds[r][c] for m in maps) for c in range(out.columns)] for r in range(out.rows)]
    out.note = maps[0].note
    return out


def uniform_map(full_total):
    w, h, _ = FULL
    m = CostMap(w, h, TILE)
    for r in range(m.rows):
        for c in range(m.columns):
            m.seconds[r][c] = full_total * m.tile_pixels(c, r) / (w * h)
    return m


def render(farm, tmp, w, h, spp, tag, measure=True):
    """(cost map or None, render seconds, whole-process seconds) of one `farm single`."""
    path = os.path.join(tmp, f"{tag}.txt")
    cmd = [farm, "single", os.path.join(ROOT, SCENE), "-o", os.path.join(tmp, f"{tag}.png"), "--width", str(w),
           "--height", str(h), "--spp", str(spp), "--threads", "1"]
    if measure:
        cmd += ["--cost-map", path, "--cost-tile", str(TILE)]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    render_s = float(re.search(r"Render time +([0-9.]+) s", out).group(1))
    total_s = float(re.search(r"Total time +([0-9.]+) s", out).group(1))
    return CostMap.read(path) if measure else None, render_s, total_s


def pearson(a, b):
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    va, vb = sum((x - ma) ** 2 for x in a), sum((y - mb) ** 2 for y in b)
    if va == 0 or vb == 0:
        return float("nan")
    return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(va * vb)


def percentile(v, p):
    v = sorted(v)
    k = (len(v) - 1) * p
    lo = math.floor(k)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (k - lo)


def compare(pred, meas, block):
    """Correlation, median and p90 |relative error| of block costs, raw and with totals matched."""
    w, h, _ = FULL
    blocks = [(x, y, min(block, w - x), min(block, h - y)) for y in range(0, h, block) for x in range(0, w, block)]
    p = [pred.cost(*b) for b in blocks]
    m = [meas.cost(*b) for b in blocks]
    raw = [abs(a - b) / b for a, b in zip(p, m)]
    k = sum(m) / sum(p)  # the shape alone: the prediction rescaled to the measured total
    shape = [abs(k * a - b) / b for a, b in zip(p, m)]
    return {"blocks": len(blocks), "r": pearson(p, m), "med": statistics.median(raw), "p90": percentile(raw, 0.9),
            "shape_med": statistics.median(shape), "shape_p90": percentile(shape, 0.9)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="farm_costmap_")
    fw, fh, fspp = FULL
    # (tag, w, h, spp, with a cost map); "full2" is an independent second measurement of "full".
    settings = [("full", fw, fh, fspp, True), ("full2", fw, fh, fspp, True), ("plain", fw, fh, fspp, False)]
    settings += [(f"p{w}x{h}s{spp}", w, h, spp, True) for w, h, spp in PREVIEWS]
    runs = {s[0]: [] for s in settings}
    for i in range(args.repeats):  # interleaved, so a slow stretch of time hits every setting alike
        for tag, w, h, spp, measure in settings:
            runs[tag].append(render(args.farm, tmp, w, h, spp, f"{tag}_{i}", measure))

    def best(tag):  # (tile-minimum map or None, smallest render seconds, smallest process seconds)
        maps = [r[0] for r in runs[tag]]
        return (tile_minimum(maps) if maps[0] else None, min(r[1] for r in runs[tag]), min(r[2] for r in runs[tag]))

    full, full_render, full_wall = best("full")
    again, again_render, again_wall = best("full2")
    _, plain_render, _ = best("plain")
    rows = [("second full render (noise floor)", again, again_render, again_wall, again.total())]
    for w, h, spp in PREVIEWS:
        m, r, t = best(f"p{w}x{h}s{spp}")
        rows.append((f"preview {w}x{h} spp {spp}", m.scaled(fw, fh, fspp / spp, TILE), r, t, m.total()))
    rows.append(("uniform (no map, measured total)", uniform_map(full.total()), 0.0, 0.0, 0.0))

    cmd = "tools/bench/cost_map_scaling.py" + ("" if args.farm == ap.get_default("farm") else f" --farm {args.farm}")
    cmd += "" if args.repeats == 3 else f" --repeats {args.repeats}"
    md = os.path.join(ROOT, "results/cost_map_scaling.md")
    kept = ""
    if os.path.exists(md):
        text = open(md).read()
        if "## What it means" in text:
            kept = text[text.index("## What it means"):]
    with open(md, "w") as f:
        f.write("# Cost maps: does a cheap preview predict the full render's block costs?\n\n"
                f"Command: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"Machine: {os.cpu_count()} cores, every render with `--threads 1`, one at a time; every setting "
                f"rendered {args.repeats} times (interleaved), each tile's smallest time kept.  \n"
                f"Scene `{SCENE}`; full render {fw}x{fh} spp {fspp}: {full_render:.2f} s render, "
                f"{full_wall:.2f} s total, cost map total {full.total():.2f} thread CPU s in {TILE} px tiles. "
                f"The same render without `--cost-map`: {plain_render:.2f} s (measuring costs "
                f"{full_render / plain_render - 1:+.1%}).\n\n"
                "Each preview's map is scaled to the full size (`CostMap::scaled`, work factor = spp ratio). "
                "*r*: Pearson correlation of predicted and measured block costs. *med*/*p90*: median and "
                "90th percentile of |predicted - measured| / measured per block; *shape*: the same after "
                "rescaling the prediction to the measured total (the spatial pattern alone). *total error*: "
                "predicted / measured total - 1. *cost*: the preview's render (and whole-process) time "
                "relative to the full render's.\n\n"
                "| prediction | cost (render / total) | total error | block | r | med | p90 | shape med | shape p90 |\n"
                "|---|---|---|---|---|---|---|---|---|\n")
        for name, pred, r_s, t_s, _ in rows:
            total_err = pred.total() / full.total() - 1
            cost = f"{r_s / full_render:.3f} / {t_s / full_wall:.3f}" if r_s > 0 else "-"
            for b in BLOCKS:
                c = compare(pred, full, b)
                r = "-" if math.isnan(c["r"]) else f"{c['r']:.3f}"  # a constant prediction has no correlation
                f.write(f"| {name} | {cost} | {total_err:+.1%} | {b} ({c['blocks']}) | {r} | {c['med']:.1%} "
                        f"| {c['p90']:.1%} | {c['shape_med']:.1%} | {c['shape_p90']:.1%} |\n")
        f.write("\n" + (kept or "## What it means\n\n(to be written)\n"))
    print(open(md).read())


if __name__ == "__main__":
    main()
