#!/usr/bin/env python3
"""Our renderer (`farm single`) against Embree's own tutorial renderers, side by side.

Two comparisons on the same OBJ (Dabrovic Sponza), camera, resolution and thread count:

  primary  farm: scenes/bench/bench_sponza_primary.toml (whitted, max_depth 0, no lights,
           ambient 1: one camera ray per pixel, shaded with the MTL diffuse colour)
           Embree: `viewer --benchmark` (one rtcIntersect1 per pixel, Kd * cos shading)
           metric: Mrays/s (camera rays / render seconds)
  path     farm: scenes/bench/bench_sponza_path.toml (path, --max-depth L, one point light)
           Embree: `pathtracer --benchmark --spp S --max-path-length L --pointlight ...`
           metric: samples/s = width * height * spp / render seconds per frame

Both renderers measure 3 frames of the same view after the BVH is built (Embree: skip 1 frame,
which includes its lazy BVH build, then measure 3; farm: `frames = 3` in the bench scenes, the
BVH is built before the render timer starts). Runs alternate between the two renderers (the
order flips every repetition) and the tables report medians.

Writes results/bench_embree.csv (every measurement) and results/bench_embree.md (medians,
ratios, command, date, machine, notes). Run through tools/bench/embree_compare.sh.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT as _ROOT  # noqa: E402

ROOT = Path(_ROOT).resolve()
SCENE_PRIMARY = ROOT / "scenes/bench/bench_sponza_primary.toml"
SCENE_PATH = ROOT / "scenes/bench/bench_sponza_path.toml"
OBJ_REL = "sponza-dabrovic/sponza.obj"
SCENE_NAME = "sponza-dabrovic"

# Must match the [camera] and [[light]] tables of the bench scenes (checked at start-up).
CAMERA = {"position": [-12.0, 4.0, 0.0], "look_at": [10.0, 6.0, 0.0], "up": [0.0, 1.0, 0.0], "fov": 60.0}
LIGHT = {"position": [0.0, 12.0, 0.0], "intensity": [300.0, 300.0, 300.0]}
MEASURED_FRAMES = 3  # farm: `frames` in the bench scenes; Embree: --benchmark 1 3

CSV_FIELDS = ["renderer", "mode", "scene", "width", "height", "spp", "path_length", "threads", "seconds",
              "mrays_or_samples_per_s"]


def log(msg: str) -> None:
    print(f"[embree_compare] {msg}", flush=True)


def skip(msg: str) -> None:
    print(f"SKIP: embree_compare: {msg}", flush=True)
    sys.exit(0)


def fmt_vec(v) -> list[str]:
    return [f"{x:g}" for x in v]


def check_scene_matches(path: Path) -> None:
    """The script passes CAMERA/LIGHT to Embree: refuse to compare if the scene drifted."""
    text = path.read_text()
    def vec(key: str, section: str) -> list[float] | None:
        block = re.search(r"^\[+" + re.escape(section) + r"\]+\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
        if not block:
            return None
        m = re.search(r"^" + key + r"\s*=\s*\[([^\]]*)\]", block.group(1), re.M)
        return [float(x) for x in m.group(1).split(",")] if m else None
    problems = []
    for key in ("position", "look_at", "up"):
        if vec(key, "camera") != CAMERA[key]:
            problems.append(f"[camera] {key} != {CAMERA[key]}")
    fov = re.search(r"^fov\s*=\s*([0-9.]+)", text, re.M)
    if not fov or float(fov.group(1)) != CAMERA["fov"]:
        problems.append(f"[camera] fov != {CAMERA['fov']}")
    frames = re.search(r"^frames\s*=\s*(\d+)", text, re.M)
    if not frames or int(frames.group(1)) != MEASURED_FRAMES:
        problems.append(f"[render] frames != {MEASURED_FRAMES}")
    if "path" in path.name:
        for key in ("position", "intensity"):
            if vec(key, "light") != LIGHT[key]:
                problems.append(f"[[light]] {key} != {LIGHT[key]}")
    if problems:
        sys.exit(f"embree_compare: {path} does not match the Embree command line: " + "; ".join(problems))


def run(cmd: list[str], timeout: float) -> tuple[str, float]:
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"command failed ({p.returncode}): {shlex.join(cmd)}\n{p.stdout[-3000:]}")
    return p.stdout, wall


def embree_camera_args(a) -> list[str]:
    return (["--size", str(a.width), str(a.height), "--threads", str(a.threads),
             "--vp", *fmt_vec(CAMERA["position"]), "--vi", *fmt_vec(CAMERA["look_at"]),
             "--vu", *fmt_vec(CAMERA["up"]), "--fov", f"{CAMERA['fov']:g}"])


def parse_embree(out: str) -> dict[str, float]:
    vals = {k: float(v) for k, v in re.findall(r"^(BENCHMARK_RENDER_\w+) ([-+0-9.eE]+)\s*$", out, re.M)}
    if "BENCHMARK_RENDER_AVG" not in vals:
        raise RuntimeError("no BENCHMARK_RENDER_AVG in Embree's output:\n" + out[-2000:])
    return vals


def measure_embree(a, mode: str, scenes_dir: Path, stream: bool = False) -> dict:
    obj = str(scenes_dir / OBJ_REL)
    if mode == "primary":
        program = a.viewer_stream if stream else a.viewer
        cmd = [program, "-i", obj, *embree_camera_args(a), "--benchmark", "1", str(MEASURED_FRAMES)]
    else:
        cmd = [a.pathtracer, "-i", obj, *embree_camera_args(a), "--spp", str(a.spp),
               "--max-path-length", str(a.path_length),
               "--pointlight", *fmt_vec(LIGHT["position"]), *fmt_vec(LIGHT["intensity"]),
               "--benchmark", "1", str(MEASURED_FRAMES)]
    out, wall = run(cmd, timeout=a.run_timeout)
    v = parse_embree(out)
    fps = v["BENCHMARK_RENDER_AVG"]  # mean fps of the measured frames (<= 3 frames: none filtered)
    seconds = 1.0 / fps
    mrays = v.get("BENCHMARK_RENDER_MRAYPS_AVG", float("nan"))
    spp = 1 if mode == "primary" else a.spp
    rate = mrays if mode == "primary" else a.width * a.height * spp / seconds
    name = ("viewer_stream" if stream else "viewer") if mode == "primary" else "pathtracer"
    return {"renderer": "embree-" + name, "mode": mode,
            "spp": spp, "path_length": 1 if mode == "primary" else a.path_length, "seconds": seconds,
            "rate": rate, "mrays": mrays, "wall": wall, "cmd": cmd}


def kd_only_assets(scenes_dir: Path, tmp: Path) -> Path:
    """A copy of the scene folder whose MTL keeps only the constant material parameters: what
    Debian's Embree tutorials render (they cannot load Sponza's JPG textures, see NOTES). The
    OBJ and everything else are symlinks; texture and bump lines are dropped."""
    out = tmp / "kd_only"
    src = scenes_dir / Path(OBJ_REL).parent
    dst = out / Path(OBJ_REL).parent
    if dst.is_dir():
        return out
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.suffix.lower() == ".mtl":
            kept = [line for line in f.read_text(errors="replace").splitlines()
                    if not re.match(r"\s*(map_|bump|disp|decal|refl)", line, re.IGNORECASE)]
            (dst / f.name).write_text("\n".join(kept) + "\n")
        else:
            (dst / f.name).symlink_to(f)
    return out


def measure_farm(a, mode: str, scenes_dir: Path, tmp: Path, textured: bool = False) -> dict:
    scene = SCENE_PRIMARY if mode == "primary" else SCENE_PATH
    stats = tmp / f"farm_{mode}.json"
    if not textured:
        scenes_dir = kd_only_assets(scenes_dir, tmp)
    cmd = [a.farm, "single", str(scene), "-o", str(tmp / f"farm_{mode}.png"), "--assets", str(scenes_dir),
           "--threads", str(a.threads), "--width", str(a.width), "--height", str(a.height), "--stats", str(stats)]
    if mode == "path":
        cmd += ["--spp", str(a.spp), "--max-depth", str(a.path_length)]
    out, wall = run(cmd, timeout=a.run_timeout)
    s = json.loads(stats.read_text())
    frames, spp = s["frames"], s["spp"]
    render = s["seconds"]["render"]
    rays = s["rays"]
    pixels = s["width"] * s["height"]
    problems = []
    if mode == "primary":
        # Only camera rays may be traced and counted: one per pixel per frame.
        if not (rays["camera"] == rays["total"] == pixels * spp * frames):
            problems.append(f"primary run traced more than camera rays: {rays}")
    seconds = render / frames
    mrays = s["mrays_per_second"]
    rate = mrays if mode == "primary" else pixels * spp / seconds
    return {"renderer": "farm-textured" if textured else "farm", "mode": mode, "spp": spp, "path_length": 1 if mode == "primary" else a.path_length,
            "seconds": seconds, "rate": rate, "mrays": mrays, "wall": wall, "cmd": cmd, "rays": rays,
            "frames": frames, "problems": problems}


def paired_ratio(ours: list[dict], theirs: list[dict]) -> float:
    by_rep = {r["rep"]: r["rate"] for r in theirs}
    ratios = [r["rate"] / by_rep[r["rep"]] for r in ours if by_rep.get(r["rep"])]
    return median(ratios)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return ", ".join(f for f in ("sse4_2", "avx", "avx2", "avx512f") if f in flags)
    except OSError:
        pass
    return "?"


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="repetitions per renderer and mode (default 5)")
    ap.add_argument("--modes", default="primary,path", help="comma-separated: primary,path")
    ap.add_argument("--width", type=int, default=800)
    ap.add_argument("--height", type=int, default=600)
    ap.add_argument("--spp", type=int, default=1, help="path mode samples per pixel per frame (default 1)")
    ap.add_argument("--path-length", type=int, default=4,
                    help="Embree --max-path-length L (1 = primary + shadow); farm gets --max-depth L")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--farm", default=os.environ.get("FARM", str(ROOT / "build/farm/farm")))
    ap.add_argument("--viewer", default=os.environ.get("EMBREE_VIEWER", "viewer"))
    ap.add_argument("--pathtracer", default=os.environ.get("EMBREE_PATHTRACER", "pathtracer"))
    ap.add_argument("--viewer-stream", default=os.environ.get("EMBREE_VIEWER_STREAM", "viewer_stream"),
                    help="also time Embree's viewer_stream (same rays and shading through rtcIntersect1M with "
                         "the coherent flag, 8x8 tiles) for information; '' to leave it out")
    ap.add_argument("--scenes", default=os.environ.get("BENCH_SCENES", str(ROOT.parent / "shared/scenes")),
                    help="folder holding sponza-dabrovic/ (default ../shared/scenes)")
    ap.add_argument("--budget", type=float, default=280.0,
                    help="stop starting new repetitions after this many seconds (default 280)")
    ap.add_argument("--run-timeout", type=float, default=120.0, help="kill one run after this many seconds")
    ap.add_argument("--out-dir", default=str(ROOT / "results"))
    ap.add_argument("--command-line", default=None, help=argparse.SUPPRESS)  # as typed, from the wrapper
    a = ap.parse_args()

    scenes_dir = Path(a.scenes).resolve()
    if not (scenes_dir / OBJ_REL).is_file():
        skip(f"test scene {scenes_dir / OBJ_REL} not found (needs ../shared/scenes)")
    a.viewer = shutil.which(a.viewer) or ""
    a.pathtracer = shutil.which(a.pathtracer) or ""
    a.viewer_stream = (shutil.which(a.viewer_stream) or "") if a.viewer_stream else ""
    if not a.viewer or not a.pathtracer:
        skip("Embree tutorial programs `viewer`/`pathtracer` not found (Debian: apt-get install embree-tools)")
    if not (os.path.isfile(a.farm) and os.access(a.farm, os.X_OK)):
        sys.exit(f"embree_compare: farm binary {a.farm} not found; build it or pass --farm")
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    for m in modes:
        if m not in ("primary", "path"):
            sys.exit(f"embree_compare: unknown mode {m!r}")
    for scene in (SCENE_PRIMARY, SCENE_PATH):
        check_scene_matches(scene)

    out_dir = Path(a.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now().astimezone()
    load_before = loadavg()
    t_start = time.monotonic()
    results: list[dict] = []
    stopped_early = []
    with tempfile.TemporaryDirectory(prefix="bench_embree_") as tmpname:
        tmp = Path(tmpname)
        for mode in modes:
            for rep in range(a.reps):
                elapsed = time.monotonic() - t_start
                if elapsed > a.budget and rep > 0:
                    stopped_early.append(f"{mode}: {rep} of {a.reps} repetitions (time budget {a.budget:.0f} s)")
                    break
                # Alternate the order so slow drift (other jobs, turbo, thermals) hits both alike.
                order = ["farm", "embree"] if rep % 2 == 0 else ["embree", "farm"]
                if mode == "primary" and a.viewer_stream:
                    order.append("embree-stream")  # information only, not in the ratio
                if mode == "path":
                    order.append("farm-textured")  # information only: the textures Embree cannot load
                for who in order:
                    if who.startswith("farm"):
                        r = measure_farm(a, mode, scenes_dir, tmp, textured=who == "farm-textured")
                    else:
                        r = measure_embree(a, mode, scenes_dir, stream=who == "embree-stream")
                    r["rep"] = rep + 1
                    results.append(r)
                    unit = "Mrays/s" if mode == "primary" else "samples/s"
                    log(f"{mode:7s} rep {rep + 1}/{a.reps} {r['renderer']:17s} {r['seconds']:8.4f} s/frame  "
                        f"{r['rate']:12.3f} {unit}  (run {r['wall']:.1f} s)")
                    for p in r.get("problems", []):
                        log("PROBLEM: " + p)
    total = time.monotonic() - t_start
    load_after = loadavg()

    # ---- CSV: one row per measurement
    csv_path = out_dir / "bench_embree.csv"
    with csv_path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS)
        for r in results:
            w.writerow([r["renderer"], r["mode"], SCENE_NAME, a.width, a.height, r["spp"], r["path_length"],
                        a.threads, f"{r['seconds']:.6f}",
                        f"{r['rate']:.4f}" if r["mode"] == "primary" else f"{r['rate']:.1f}"])

    # ---- Markdown summary
    def rows(mode: str, who_prefix: str) -> list[dict]:
        if who_prefix == "embree":  # the renderer the target is set against
            who_prefix = "embree-viewer" if mode == "primary" else "embree-pathtracer"
            return [r for r in results if r["mode"] == mode and r["renderer"] == who_prefix]
        if who_prefix == "farm":
            return [r for r in results if r["mode"] == mode and r["renderer"] == "farm"]
        return [r for r in results if r["mode"] == mode and r["renderer"].startswith(who_prefix)]

    problems = [p for r in results for p in r.get("problems", [])]
    command = a.command_line or shlex.join([sys.argv[0], *sys.argv[1:]])
    md = []
    md.append("# Renderer benchmark: farm vs Embree's tutorial renderers\n")
    md.append(f"- Date: {started.strftime('%Y-%m-%d %H:%M:%S %Z')} (took {total:.0f} s)")
    md.append(f"- Command: `{command}`")
    md.append(f"- Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()} ({cpu_flags()}), "
              f"{platform.system()} {platform.release()}")
    md.append(f"- Load average before / after: {load_before} / {load_after} "
              "(other jobs share this machine; see notes)")
    md.append(f"- Scene: `{OBJ_REL}` (66,450 triangles after triangulation), {a.width}x{a.height}, "
              f"{a.threads} threads, camera --vp {' '.join(fmt_vec(CAMERA['position']))} "
              f"--vi {' '.join(fmt_vec(CAMERA['look_at']))} --vu {' '.join(fmt_vec(CAMERA['up']))} "
              f"--fov {CAMERA['fov']:g}")
    md.append(f"- Embree: Debian embree-tools `viewer` / `pathtracer` "
              f"({embree_version()}); farm: `{a.farm}` (same libembree3)")
    md.append(f"- Repetitions: {a.reps} per renderer and mode, alternating; {MEASURED_FRAMES} measured frames per run"
              + (f"; stopped early: {'; '.join(stopped_early)}" if stopped_early else ""))
    md.append("")
    md.append("| mode | metric | farm (median) | Embree (median) | ours / Embree | paired | target | met | n |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    verdicts = {}
    for mode in modes:
        ours, theirs = rows(mode, "farm"), rows(mode, "embree")
        mo, me = median([r["rate"] for r in ours]), median([r["rate"] for r in theirs])
        ratio = mo / me if me else float("nan")
        paired = paired_ratio(ours, theirs)
        target = 1.0  # issue 12: at least Embree's own tutorials, in both modes
        # Met only when both the ratio of medians and the paired ratio reach the target.
        met = ("yes" if min(ratio, paired) >= target else "borderline" if max(ratio, paired) >= target else "no")
        verdicts[mode] = (ratio, paired, target, met)
        if mode == "primary":
            md.append(f"| primary (camera rays only) | Mrays/s | {mo:.3f} | {me:.3f} (viewer) | {ratio:.3f} | "
                      f"{paired:.3f} | >= {target} | {met} | {len(ours)}/{len(theirs)} |")
            streams = rows(mode, "embree-viewer_stream")
            if streams:
                ms = median([r["rate"] for r in streams])
                md.append(f"| primary, for information | Mrays/s | {mo:.3f} | {ms:.3f} (viewer_stream) | "
                          f"{mo / ms:.3f} | {paired_ratio(ours, streams):.3f} | - | - | {len(ours)}/{len(streams)} |")
        else:
            md.append(f"| path, spp {a.spp}, path length {a.path_length} | samples/s | {mo:,.0f} | {me:,.0f} "
                      f"(pathtracer) | {ratio:.3f} | {paired:.3f} | >= {target} | {met} | {len(ours)}/{len(theirs)} |")
            textured = rows(mode, "farm-textured")
            if textured:
                mt = median([r["rate"] for r in textured])
                md.append(f"| path, farm with Sponza's textures and bump maps, for information | samples/s | {mt:,.0f} | "
                          f"{me:,.0f} (pathtracer, untextured) | {mt / me:.3f} | {paired_ratio(textured, theirs):.3f} "
                          f"| - | - | {len(textured)}/{len(theirs)} |")
    md.append("")
    md.append("*ours / Embree* is the ratio of the medians; *paired* is the median of the per-repetition "
              "ratios (each farm run against the Embree run next to it), less sensitive to load that changes "
              "between repetitions. *met*: yes when both reach the target, borderline when one does.\n")
    md.append("Secondary figures (medians): seconds per frame, and Mrays/s as each renderer counts rays.\n")
    md.append("| mode | farm s/frame | Embree s/frame | farm Mrays/s | Embree Mrays/s | farm rays per sample |")
    md.append("|---|---|---|---|---|---|")
    for mode in modes:
        ours, theirs = rows(mode, "farm"), rows(mode, "embree")
        rps = "-"
        if ours:
            rr = ours[-1]["rays"]
            samples = a.width * a.height * ours[-1]["spp"] * ours[-1]["frames"]
            rps = (f"{rr['total'] / samples:.2f} (camera {rr['camera'] / samples:.2f}, shadow "
                   f"{rr['shadow'] / samples:.2f}, indirect {rr['indirect'] / samples:.2f})")
        md.append(f"| {mode} | {median([r['seconds'] for r in ours]):.4f} | {median([r['seconds'] for r in theirs]):.4f} "
                  f"| {median([r['mrays'] for r in ours]):.3f} | {median([r['mrays'] for r in theirs]):.3f} | {rps} |")
    md.append("")
    md.append("All measurements (also in `results/bench_embree.csv`):\n")
    md.append("| rep | renderer | mode | s/frame | Mrays/s or samples/s |")
    md.append("|---|---|---|---|---|")
    for r in results:
        rate = f"{r['rate']:.3f}" if r["mode"] == "primary" else f"{r['rate']:,.0f}"
        md.append(f"| {r['rep']} | {r['renderer']} | {r['mode']} | {r['seconds']:.4f} | {rate} |")
    md.append("")
    if problems:
        md.append("**Problems:** " + "; ".join(sorted(set(problems))) + "\n")
    md.append("Exact per-run commands (last repetition):\n")
    for mode in modes:
        for prefix in ("farm", "farm-textured", "embree", "embree-viewer_stream"):
            rs = rows(mode, prefix) if prefix != "embree-viewer_stream" or mode == "primary" else []
            if rs:
                md.append(f"- {mode}, {prefix}: `{shlex.join(rs[-1]['cmd'])}`")
    md.append("")
    md.append(NOTES.format(frames=MEASURED_FRAMES, L=a.path_length, Lp1=a.path_length + 1))
    (out_dir / "bench_embree.md").write_text("\n".join(md) + "\n")

    log(f"wrote {csv_path} and {out_dir / 'bench_embree.md'} in {total:.0f} s")
    for mode, (ratio, paired, target, met) in verdicts.items():
        log(f"{mode}: ours/Embree = {ratio:.3f}, paired {paired:.3f} (target >= {target}: {met})")
    return 1 if problems else 0


def embree_version() -> str:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "embree-tools"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=10).stdout.strip()
        return "embree-tools " + out if out else "version unknown"
    except (OSError, subprocess.SubprocessError):
        return "version unknown"


NOTES = """## What differs between the two measurements (read before quoting the ratio)

- **Same kernels, different renderers.** Both link Debian's libembree3 3.13.5. The Debian
  tutorials are the C++ build (no ISPC) and trace single rays with `rtcIntersect1` /
  `rtcOccluded1`. farm traces camera rays as 16-ray packets (`rtcIntersect16`, coherent; one
  packet per image-aligned 4x4 cell, always traced whole, so that the image stays
  byte-identical across tilings) and all other rays one by one. The rest of the difference is
  what each renderer does around a ray: sampling, hit processing, shading, the parallel loop.
- **viewer_stream (information only).** Embree's `viewer_stream` traces exactly the viewer's
  rays with the viewer's shading, but per 8x8 tile through `rtcIntersect1M` with
  `RTC_INTERSECT_CONTEXT_FLAG_COHERENT` (Embree turns the coherent stream into packets). It is
  not the target; it shows what the same library gives for camera rays when they are traced as
  coherent batches rather than one `rtcIntersect1` at a time.
- **Timing.** Embree: `--benchmark 1 {frames}` skips one frame (it contains Embree's lazy BVH
  build) and reports the mean over {frames} frames of per-frame fps and Mrays/s
  (`BENCHMARK_RENDER_AVG`, `BENCHMARK_RENDER_MRAYPS_AVG`; with <= 3 measured frames its
  outlier filter drops nothing). farm: the bench scenes render `frames = {frames}` identical
  frames; `seconds.render` is their sum (the BVH build is excluded; the image write between
  frames is not timed), so farm's first frame is not skipped. s/frame = render seconds / frames.
- **Primary rays.** Embree's viewer traces one ray through the pixel corner (x, y) per pixel
  and shades `Kd * dot(-dir, Ng)` (no lights, no textures). farm (whitted, max_depth 0, no
  lights, ambient 1) traces one ray through a Sobol-sampled point of the pixel and shades
  `Kd * ambient` through the full whitted code path (material lookup, BSDF set-up, shading
  normal, uv interpolation). The run fails if farm counts any ray but camera rays.
- **Path tracing.** Embree `--max-path-length L` traces at most L rays with rtcIntersect1 per
  sample and samples the light at each of those L hits (L = 1 is primary + shadow); farm's
  `--max-depth D` samples the light at the first D hits and traces D + 1 intersection rays.
  Same light transport for D = L (here L = {L}), but farm traces up to {Lp1} intersection rays
  per sample against Embree's {L}: the last one can only find emitters or the environment,
  which this scene does not have. Termination also differs: Embree stops a path when its
  throughput falls below 0.01; farm uses Russian roulette after 3 bounces. Samples/s is the
  fair unit (the same image quality target); Mrays/s is shown for information only, and
  the two count rays differently (Embree counts a shadow ray for every light sample, farm only
  for those that reach the BSDF's side).
- **Materials.** Debian's Embree cannot load Sponza's JPG textures (`image format jpg not
  supported`), so its tutorials render the MTL's constant `Kd` colours. farm reads the textures
  (map_Kd, bump) since issue 11; to time the same work it is given a copy of the MTL without
  texture and bump lines (`kd_only_assets`: the OBJ is a symlink). The row "farm with Sponza's
  textures" renders the original MTL, for information: its extra cost is texture lookups
  (bilinear, 8-bit sRGB) and bump-map gradients, bound by cache misses on 2048^2 images that
  are sampled at their finest level. One Sponza material has a small `Ks`: farm makes it
  plastic (GGX), Embree an OBJ Phong material. Embree's pathtracer installs an occlusion
  filter callback on every triangle mesh (for its transparency support), so each shadow-ray
  hit calls back into the application; farm's `rtcOccluded1` has no callbacks.
- **Output.** Embree writes 8-bit linear values; farm writes sRGB (not timed either way).
- **Noise.** This machine has 2 cores shared with other agents' builds and renders; a run
  that shares the cores with another job is slower. The alternating order and medians reduce
  but do not remove this: compare the load averages above, and repeat with more `--reps` when
  the spread in the table of all measurements is large.
"""

if __name__ == "__main__":
    sys.exit(main())
