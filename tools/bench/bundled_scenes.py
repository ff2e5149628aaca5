#!/usr/bin/env python3
"""Do the bundled scenes (scenes/*.toml) look at least as good as with an older build, at the
same time? (issue 12, "Done when".)

For each scene and each of two farm binaries (--new, --old): render the scene's default settings
(frame 1) with three seeds, average their MSEs and keep the fastest render phase; render a reference at
--ref-mult x the scene's spp with that same binary (seeds 1 and 2, half the spp each: their
difference estimates the reference's own noise, which is removed from the MSE). RMSE is measured on the displayed image (clamped, sRGB). Each build is
measured against its own reference, because the builds may differ in pixel filter and sampler
(a systematic difference is not noise). Efficiency = 1 / (MSE x time); the ratio new / old >= 1
means the new build reaches the same noise sooner.

Writes results/bench_bundled_scenes.md (+ .csv) and side-by-side images (old | new at the
default settings) into results/bundled_scenes/.

  /usr/bin/python3 tools/bench/bundled_scenes.py --new build/farm/farm --old /tmp/old/build/farm/farm \
      --old-label 8b82585
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import OpenImageIO as oiio

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT as _ROOT  # noqa: E402

ROOT = Path(_ROOT).resolve()


def read_exr(path: Path) -> np.ndarray:
    img = oiio.ImageBuf(str(path))
    if img.has_error:
        sys.exit(f"bundled_scenes: cannot read {path}: {img.geterror()}")
    return img.get_pixels(oiio.FLOAT)[:, :, :3].astype(np.float64)


TEST_SEEDS = (0, 3, 4, 5, 6)
ASSETS = ROOT.parent / "shared" / "scenes"  # the bunny's mesh; scenes needing it are skipped without it


def render(farm: str, scene: Path, out: Path, spp: int | None, seed: int, threads: int) -> tuple[float, list[str]]:
    stats = out.with_suffix(".json")
    cmd = [farm, "single", str(scene), "-o", str(out), "--frame", "1", "--seed", str(seed), "--threads",
           str(threads), "--stats", str(stats), "--assets", str(ASSETS)]
    if spp:
        cmd += ["--spp", str(spp)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bundled_scenes: {shlex.join(cmd)} failed:\n{p.stderr}")
    return json.loads(stats.read_text())["seconds"]["render"], cmd


def display(img: np.ndarray) -> np.ndarray:
    """What a PNG of the image shows: clamped to [0, 1], sRGB-encoded (floats in [0, 1])."""
    c = np.clip(img, 0, 1)
    return np.where(c <= 0.0031308, 12.92 * c, 1.055 * np.power(c, 1 / 2.4) - 0.055)


def srgb8(img: np.ndarray) -> np.ndarray:
    return np.round(display(img) * 255).astype(np.uint8)


def write_side_by_side(old: np.ndarray, new: np.ndarray, path: Path) -> None:
    gap = np.full((old.shape[0], 4, 3), 255, np.uint8)
    both = np.concatenate([srgb8(old), gap, srgb8(new)], axis=1)
    spec = oiio.ImageSpec(both.shape[1], both.shape[0], 3, oiio.UINT8)
    buf = oiio.ImageBuf(spec)
    buf.set_pixels(oiio.ROI(), both)
    if not buf.write(str(path)):
        sys.exit(f"bundled_scenes: cannot write {path}: {buf.geterror()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--new", default=str(ROOT / "build/farm/farm"))
    ap.add_argument("--old", required=True, help="the farm binary to compare against")
    ap.add_argument("--old-label", default="old", help="how the report names the old build (e.g. a commit)")
    ap.add_argument("--ref-mult", type=int, default=16, help="reference spp = this x the scene's spp (default 16)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="test images per scene and build, seeds 0, 3, 4, ... (MSE averaged, fastest time kept; default 3)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", nargs="*", help="scene names (default: every scenes/*.toml)")
    ap.add_argument("--work-dir", default=str(ROOT / "build/bench_bundled"))
    ap.add_argument("--out-md", default=str(ROOT / "results/bench_bundled_scenes.md"))
    a = ap.parse_args()

    work = Path(a.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    out_md = Path(a.out_md)
    fig_dir = out_md.parent / "bundled_scenes"
    fig_dir.mkdir(parents=True, exist_ok=True)
    scenes = sorted(p for p in (ROOT / "scenes").glob("*.toml") if not a.only or p.stem in a.only)
    builds = {"old": a.old, "new": a.new, "new_box": a.new}
    started = dt.datetime.now().astimezone()
    rows, commands = [], []
    for scene in scenes:
        text = scene.read_text()
        if 'type = "mesh"' in text and not ASSETS.is_dir():
            print(f"skipped {scene.stem}: its mesh is in {ASSETS}, which is absent", file=sys.stderr)
            continue
        settings = tomllib.loads(text).get("render", {})
        spp = int(settings.get("spp", 16))
        m = {}
        # The new build once more with the box filter (the old default): separates what the
        # sampler changed from what the wider default filter changed.
        boxed = work / f"{scene.stem}_box.toml"
        boxed.write_text(text if 'filter = "box"' in text else text.replace("[render]", '[render]\nfilter = "box"', 1))
        # The old build predates the filter keys (its only filter was the box): a copy without them.
        old_file = work / f"{scene.stem}_old.toml"
        old_lines = [l for l in text.splitlines() if not l.strip().startswith(("filter ", "filter=", "filter_width"))]
        old_file.write_text("\n".join(old_lines) + "\n")
        if any(l.replace(" ", "").startswith("filter=") and '"box"' not in l for l in text.splitlines()):
            print(f"note: {scene.stem} sets a filter the old build cannot render", file=sys.stderr)
        for who, farm in builds.items():
            scene_file = {"new_box": boxed, "old": old_file}.get(who, scene)
            times, imgs = [], []
            # Three test seeds (their MSEs averaged): at 4-8 spp a few aliased highlight or
            # horizon pixels carry much of one image's error, so one seed is a noisy measure.
            for seed in TEST_SEEDS[: a.repeat]:
                t, cmd = render(farm, scene_file, work / f"{scene.stem}_{who}_s{seed}.exr", None, seed, a.threads)
                times.append(t)
                imgs.append(read_exr(work / f"{scene.stem}_{who}_s{seed}.exr"))
            img = imgs[0]
            commands.append(shlex.join(cmd))
            half = spp * a.ref_mult // 2
            refs = []
            for seed in (1, 2):
                _, cmd = render(farm, scene_file, work / f"{scene.stem}_{who}_ref{seed}.exr", half, seed, a.threads)
                refs.append(read_exr(work / f"{scene.stem}_{who}_ref{seed}.exr"))
                commands.append(shlex.join(cmd))
            # Measured on the displayed image (see the report): linear radiance lets a handful of
            # aliased pixels on bright emitters (values in the hundreds) decide the whole figure.
            ref = display((refs[0] + refs[1]) / 2)
            var_ref = float(np.mean((display(refs[0]) - display(refs[1])) ** 2)) / 4
            mse_raw = float(np.mean([np.mean((display(i) - ref) ** 2) for i in imgs]))
            mse = max(mse_raw - var_ref, 1e-30)
            m[who] = dict(time=min(times), rmse=mse ** 0.5, img=img, lum=float(np.mean(ref)))
        eff = {w: 1 / (m[w]["rmse"] ** 2 * m[w]["time"]) for w in m}
        ratio = eff["new"] / eff["old"]
        ratio_box = eff["new_box"] / eff["old"]
        write_side_by_side(m["old"]["img"], m["new"]["img"], fig_dir / f"{scene.stem}_old_new.png")
        rows.append(dict(scene=scene.stem, integrator=settings.get("integrator", "path"), spp=spp,
                         old_time=m["old"]["time"], new_time=m["new"]["time"], old_rmse=m["old"]["rmse"],
                         new_rmse=m["new"]["rmse"], ratio=ratio, new_box_rmse=m["new_box"]["rmse"],
                         ratio_box=ratio_box, lum_ratio=m["new"]["lum"] / m["old"]["lum"]))
        print(f"{scene.stem:8s} time {m['old']['time']:.3f} -> {m['new']['time']:.3f} s, RMSE {m['old']['rmse']:.5f} "
              f"-> {m['new']['rmse']:.5f} (box {m['new_box']['rmse']:.5f}), efficiency new/old {ratio:.2f} "
              f"(box {ratio_box:.2f})", flush=True)

    with out_md.with_suffix(".csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    md = ["# Bundled scenes: new build against an older one, at their default settings\n",
          f"Made by `/usr/bin/python3 tools/bench/bundled_scenes.py --old {a.old} --old-label {a.old_label}` "
          f"on {started.strftime('%Y-%m-%d %H:%M %Z')}; new = `{a.new}`, old = {a.old_label}. "
          f"{a.threads} threads; {a.repeat} test images per scene and build (seeds {', '.join(map(str, TEST_SEEDS[:a.repeat]))}: "
          f"MSE averaged, fastest render phase kept); "
          f"references of {a.ref_mult}x the scene's spp from the same build (two seeds, their noise removed).\n",
          "RMSE is measured on what a PNG shows (linear radiance clamped to [0, 1], sRGB-encoded, in [0, 1]), "
          "against the build's own reference: these scenes have small emitters and highlights in the "
          "hundreds, whose aliased edge pixels would otherwise decide a linear RMSE alone. "
          "Efficiency = 1 / (RMSE^2 x time); "
          "ratio >= 1: the new build reaches the same noise level sooner. *lum* compares the two references' "
          "mean (the builds should converge to the same image up to the pixel filter).\n",
          "*new, box* is the new build with `filter = \"box\"` (the old default) added to the scene: "
          "it separates what the sampler and renderer changed from what the wider default filter "
          "(Blackman-Harris over 3 px) changed.\n",
          "| scene | integrator | spp | time old (s) | time new (s) | RMSE old | RMSE new | efficiency new/old | RMSE new, box | efficiency new box/old | lum new/old | images (old, new) |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['scene']} | {r['integrator']} | {r['spp']} | {r['old_time']:.3f} | {r['new_time']:.3f} | "
                  f"{r['old_rmse']:.5f} | {r['new_rmse']:.5f} | **{r['ratio']:.2f}** | {r['new_box_rmse']:.5f} | "
                  f"{r['ratio_box']:.2f} | {r['lum_ratio']:.4f} | "
                  f"[png](bundled_scenes/{r['scene']}_old_new.png) |")
    md.append("\n<details><summary>commands</summary>\n\n```sh")
    md.extend(commands)
    md.append("```\n\n</details>\n")
    out_md.write_text("\n".join(md))
    print(f"wrote {out_md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
