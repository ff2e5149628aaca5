"""Where adaptive sampling stops, for tools/bench/convergence.py --adaptive: the number of samples
each pixel took, per renderer and threshold, and where the remaining error is. Imported by
convergence.py.

- Cycles: an extra, untimed render of each adaptive setting with its Debug Sample Count pass
  (tools/compare/cycles_render.py --sample-count-out). The pass holds the count divided by the
  highest sample any pixel reached (the last "Sample N/M" Cycles reports), not by the maximum spp.
  Its image is compared with the timed render's (they should be identical).
- Ours has no sample-count pass. Every number of a pixel's sample i is a pure function of (seed,
  pixel, i, max spp, slot) and the pixel is the plain mean of its samples, so a pixel that stopped
  after n samples holds exactly the mean of the first n samples of the max-spp sequence. That
  prefix is rendered directly: `--noise-threshold 1 --min-samples n --spp MAX` stops every pixel at
  its first check, n (checked: its camera rays are n per pixel). A pixel of an adaptive render
  whose value equals the n-prefix's bit for bit, for the smallest such n among the checkpoints
  (min_samples, then each doubling), stopped at n; one that matches none ran to MAX. A pixel whose
  samples are all equal matches every prefix up to where it stopped; since our estimate counts an
  unseen sample of 0 (commit 68b6606) such pixels (a light seen directly, a uniform sky) no longer
  stop at the first check, and ours_counts places them by the estimate instead (see there). The
  counts are checked against the render's camera rays.
"""
import json
import math
import os

import numpy as np

from bench.convergence_render import render_command
from compare import compare_images  # read_rgb
from compare import cycles_compare  # run

BINS = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536)


def ours_auto_min(max_spp):
    """Ours' automatic min_samples: the power of two at or above sqrt(max spp), at least 4
    (docs/cli.md --min-samples)."""
    p = 4
    while p * p < max_spp:
        p *= 2
    return p


def ours_checkpoints(max_spp, min_samples=0):
    n = min_samples or ours_auto_min(max_spp)
    out = []
    while n < max_spp:
        out.append(n)
        n *= 2
    return out


def render_ours_prefixes(case, scene, max_spp, seed, args, work, log):
    """Renders (or, with --reanalyze, finds) the n-sample prefixes; returns {n: exr} and the
    checkpoints whose render was not a pure prefix (some pixel went on)."""
    out, impure = {}, []
    w, h = case["width"], case["height"]
    for n in ours_checkpoints(max_spp):
        j = render_command("ours", case, scene, max_spp, seed, f"prefix{n}_max{max_spp}", args, work,
                           ["--noise-threshold", "1", "--min-samples", str(n)])
        if not args.reanalyze:
            for p in (j["exr"], j["js"]):
                if os.path.exists(p):
                    os.remove(p)
            cycles_compare.run(j["cmd"], log)
        with open(j["js"]) as f:
            cam = json.load(f).get("rays", {}).get("camera")
        if cam != n * w * h:
            impure.append(n)
        out[n] = j["exr"]
    return out, impure


def ours_counts(exr, prefixes, max_spp, threshold=None):
    """Each pixel's samples: the smallest checkpoint whose prefix it equals bit for bit, else max_spp.

    A pixel whose samples are all equal (the inside of a light, a uniform sky seen directly, black)
    equals every prefix up to where it stopped, so the smallest match says nothing there. Given the
    render's `threshold`, such a pixel (one that equals two or more prefixes) is given the first of
    its matching checkpoints at which our error estimate for n equal samples passes
    (renderer/render/adaptive_sampling.cpp: sqrt(sum_c v_c^2 / (n (n + 1))) / sqrt(1e-4 + sum_c v_c)),
    or max_spp if none does (it went past the last one it equals, so to the end). Check the total
    against the render's camera rays (camera_rays_check)."""
    img = compare_images.read_rgb(exr)
    counts = np.zeros(img.shape[:2], dtype=np.int64)
    matches = {}
    for n in sorted(prefixes):
        p = compare_images.read_rgb(prefixes[n])
        matches[n] = np.all(p == img, axis=2)
        counts[matches[n] & (counts == 0)] = n
    counts[counts == 0] = max_spp
    if threshold is not None:
        ambiguous = sum(m.astype(np.int64) for m in matches.values()) >= 2
        if ambiguous.any():
            v = img[ambiguous].astype(np.float32)
            resolved = np.full(v.shape[0], max_spp, dtype=np.int64)
            done = np.zeros(v.shape[0], dtype=bool)
            for n in sorted(prefixes):
                fn = np.float32(n)
                err = np.sqrt(np.sum(v * v, axis=1) / (fn + 1) / fn) / np.sqrt(
                    np.float32(1e-4) + np.sum(np.maximum(v, 0), axis=1))
                ok = matches[n][ambiguous] & (err < np.float32(threshold)) & ~done
                resolved[ok] = n
                done |= ok
            counts[ambiguous] = resolved
    return counts


def camera_rays_check(exr, counts):
    """(samples counted, camera rays of the render's statistics next to its image, or None)."""
    js = os.path.splitext(exr)[0] + ".json"
    try:
        with open(js) as f:
            cam = json.load(f).get("rays", {}).get("camera")
    except (OSError, ValueError):
        cam = None
    return int(counts.sum()), cam


def render_cycles_counts(case, scene, max_spp, seed, threshold, args, work, log, timed_exr):
    """An untimed Cycles render of one adaptive setting with the sample-count pass; returns the
    per-pixel counts and whether its image equals the timed render's."""
    import OpenImageIO as oiio
    tag = f"samples_at{threshold:g}_max{max_spp}"
    counts_exr = os.path.join(work, f"{case['name']}_cycles_{tag}_passes.exr")
    j = render_command("cycles", case, scene, max_spp, seed, tag, args, work,
                       ["--adaptive-threshold", f"{threshold:g}", "--sample-count-out", counts_exr])
    if getattr(args, "reuse_from", None) and not args.reanalyze:
        from bench.convergence_render import reuse_files
        reuse_files((j["exr"], j["js"], counts_exr), args)  # Cycles did not change: its counts neither
        with open(j["js"]) as f:
            t = json.load(f)
        if not t.get("samples_reached"):
            # A render from before cycles_render.py recorded it: from that run's log, by that run's command.
            old = dict(j, cmd=[a.replace(args.work_dir, args.reuse_from) for a in j["cmd"]])
            t["samples_reached"] = cycles_samples_reached(old, os.path.join(args.reuse_from,
                                                                            f"{case['name']}_log.txt"))
            with open(j["js"], "w") as f:
                json.dump(t, f)
    elif not args.reanalyze:
        for p in (j["exr"], j["js"], counts_exr):
            if os.path.exists(p):
                os.remove(p)
        cycles_compare.run(j["cmd"], log)
    inp = oiio.ImageInput.open(counts_exr)
    if inp is None:
        raise OSError(f"cannot read {counts_exr}: {oiio.geterror()}")
    names = list(inp.spec().channelnames)
    px = inp.read_image("float")
    inp.close()
    k = next(i for i, n in enumerate(names) if "Sample Count" in n)
    # The pass holds count / the samples of the pixels that went furthest (not / max spp).
    counts = np.rint(px[..., k] * cycles_samples_reached(j, log)).astype(np.int64)
    same = bool(np.array_equal(compare_images.read_rgb(j["exr"]), compare_images.read_rgb(timed_exr)))
    return counts, same


def cycles_samples_reached(job, log):
    """The highest sample Cycles reported for this render: from its time JSON, or (files of a run
    before cycles_render.py recorded it) from its "Sample N/M" lines in the scene's log."""
    with open(job["js"]) as f:
        n = json.load(f).get("samples_reached")
    if n:
        return n
    import re
    import shlex
    with open(log) as f:
        text = f.read()
    start = text.find("$ " + shlex.join(job["cmd"]) + "\n")
    if start < 0:
        raise OSError(f"{job['js']} has no samples_reached and {log} does not hold its render's output")
    end = text.find("\n$ ", start + 1)
    found = [int(x) for x in re.findall(r"\| Sample (\d+)/", text[start:end if end > 0 else None])]
    if not found:
        raise OSError(f"no 'Sample N/M' line for {job['exr']} in {log}")
    return max(found)


def count_stats(counts, max_spp):
    c = counts.astype(np.float64)
    lo = int(counts.min())
    return {"mean": float(c.mean()), "p10": float(np.percentile(c, 10)), "p50": float(np.percentile(c, 50)),
            "p90": float(np.percentile(c, 90)), "min": lo, "max": int(counts.max()),
            "share_at_min": float(np.mean(counts == lo)), "share_at_max": float(np.mean(counts >= max_spp))}


def error_by_count(img_exr, counts, halves):
    """Where the error is: per sample-count bin (upper edges BINS), the share of pixels, of samples
    and of the image's squared error against the reference (the mean of the halves; the
    reference's own noise, estimated per pixel as (A - B)^2 / 4, subtracted), and the bin's RMSE."""
    a, b = (compare_images.read_rgb(p) for p in halves)
    ref = (a + b) / 2
    img = compare_images.read_rgb(img_exr)
    se = np.mean((img - ref) ** 2, axis=2) - np.mean((a - b) ** 2, axis=2) / 4
    total_se, total_n = float(se.sum()), float(counts.sum())
    out, lower = [], 0
    for upper in BINS:
        m = (counts > lower) & (counts <= upper)
        if m.any():
            out.append({"bin": (lower, upper), "pixels": float(m.mean()), "samples": float(counts[m].sum() / total_n),
                        "error": float(se[m].sum() / total_se) if total_se > 0 else float("nan"),
                        "rmse": math.sqrt(max(float(se[m].mean()), 0.0))})
        lower = upper
    return out
