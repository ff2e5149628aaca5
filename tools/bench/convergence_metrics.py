"""Metrics for tools/bench/convergence.py: each renderer's reference from its two halves (with
the reference's own noise estimated and subtracted), RMSE and efficiency per spp, the cross-check
of the two references, and the fixed + per-sample time fit. Imported by convergence.py.
"""
import math

import numpy as np

from compare import compare_images  # read_rgb, REC709

BIAS_FLAG = 0.02     # flag a mean-luminance difference between the references above this


def luminance(img):
    return img @ compare_images.REC709


def reference_from_halves(a, b):
    """A renderer's reference from its two independent halves A, B (images): their mean, and the
    variance of that mean per pixel and channel, averaged: E[(A - B)^2] / 4."""
    return {"img": (a + b) / 2, "var": float(np.mean((a - b) ** 2) / 4)}


def image_error(r, ref):
    """r (a render's meta) with its error against its renderer's reference `ref` (analyse's refs[who])
    added: raw MSE, MSE and RMSE with the reference's noise subtracted, the share of that noise."""
    img = compare_images.read_rgb(r["exr"])
    mse_raw = float(np.mean((img - ref["img"]) ** 2))
    mse = mse_raw - ref["var"]
    return dict(r, mse_raw=mse_raw, rmse_raw=math.sqrt(mse_raw),
                # A corrected MSE at or below zero means the reference is too noisy
                # for this spp: no estimate (the ratio is then not reported).
                mse=mse if mse > 0 else float("nan"),
                rmse=math.sqrt(mse) if mse > 0 else float("nan"),
                ref_share=ref["var"] / mse_raw if mse_raw > 0 else float("nan"),
                mean_lum=float(luminance(img).mean()))


def analyse(case, renders, test_spps):
    """renders[(kind, spp)] -> {'ours': r, 'cycles': r}; kind 'test' or 'half1'/'half2'.
    Returns per-renderer reference stats, the rows (one per test spp) and the cross-check."""
    refs = {}
    for who in ("ours", "cycles"):
        a = compare_images.read_rgb(renders["half1"][who]["exr"])
        b = compare_images.read_rgb(renders["half2"][who]["exr"])
        refs[who] = reference_from_halves(a, b)
        ref = refs[who]["img"]
        refs[who] |= {"mean_lum": float(luminance(ref).mean()),
                      "mean_rgb": [float(x) for x in ref.reshape(-1, 3).mean(0)],
                      "seconds": renders["half1"][who]["seconds"] + renders["half2"][who]["seconds"],
                      "finite": bool(np.isfinite(ref).all())}
    o, cy = refs["ours"], refs["cycles"]
    d = o["img"] - cy["img"]
    mse_refs = float(np.mean(d ** 2))
    cross = {
        "lum_ratio": o["mean_lum"] / cy["mean_lum"] if cy["mean_lum"] > 0 else float("nan"),
        "rmse": math.sqrt(mse_refs),
        # What the two references' noise alone would give: sqrt(var_o + var_c).
        "rmse_noise": math.sqrt(o["var"] + cy["var"]),
        "rel_rmse": math.sqrt(mse_refs) / max(float(cy["img"].mean()), 1e-12),
        "mean_rgb_ours": o["mean_rgb"], "mean_rgb_cycles": cy["mean_rgb"],
    }
    cross["flag"] = not (abs(cross["lum_ratio"] - 1) <= BIAS_FLAG)
    rows = []
    for spp in test_spps:
        row = {"spp": spp}
        for who in ("ours", "cycles"):
            r = renders[("test", spp)][who]
            row[who] = image_error(r, refs[who])
            t = r["seconds"]
            row[who]["eff"] = 1.0 / (row[who]["mse"] * t) if t > 0 else float("nan")
            row[who]["eff_raw"] = 1.0 / (row[who]["mse_raw"] * t) if t > 0 and row[who]["mse_raw"] > 0 else float("nan")
            if who == "cycles" and r.get("pt_seconds"):
                row[who]["eff_pt"] = 1.0 / (row[who]["mse"] * r["pt_seconds"])
        row["ratio"] = row["ours"]["eff"] / row["cycles"]["eff"]
        row["ratio_raw"] = row["ours"]["eff_raw"] / row["cycles"]["eff_raw"]
        row["ratio_pt"] = row["ours"]["eff"] / row["cycles"]["eff_pt"] if "eff_pt" in row["cycles"] else float("nan")
        rows.append(row)
    # Timed phase = fixed part + per-sample part: a least-squares line through every render of
    # the scene (test images and reference halves), per renderer and time kind.
    fits = {}
    for who, key in (("ours", "seconds"), ("cycles", "seconds"), ("cycles", "pt_seconds")):
        pts = [(r[who]["spp"], r[who].get(key)) for r in renders.values()]
        pts = [(x, y) for x, y in pts if y is not None]
        if len({x for x, _ in pts}) >= 2:
            b, a = np.polyfit([x for x, _ in pts], [y for _, y in pts], 1)
            fits[(who, key)] = (float(a), float(b))
    return refs, rows, cross, fits
