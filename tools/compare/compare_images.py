#!/usr/bin/python3
# Compares two linear EXR renders of the same view (ours, a reference) and draws them side by
# side with their absolute difference. Debian's python3 (numpy, matplotlib, OpenImageIO), not a
# pyenv one: `tools/compare/install_blender.sh` installs them.
#
#   compare_images.py OURS.exr THEIRS.exr --out-dir DIR --name NAME [--exposure E]
#
# Prints one JSON line: RMSE over all pixels and RGB channels (linear radiance), the ratio of
# mean luminances ours/theirs (Rec. 709 weights), per-channel means of both, and the figure.
import os
import sys
import json
import argparse

import numpy as np
import OpenImageIO as oiio
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

REC709 = np.array([0.2126, 0.7152, 0.0722])


def read_rgb(path):
    buf = oiio.ImageBuf(path)
    if buf.has_error:
        raise SystemExit(f"cannot read {path}: {buf.geterror()}")
    px = buf.get_pixels(oiio.FLOAT)  # (h, w, channels), top row first
    if px.ndim != 3 or px.shape[2] < 3:
        raise SystemExit(f"{path}: expected an RGB(A) image, got shape {px.shape}")
    return px[:, :, :3].astype(np.float64)  # alpha is 1 in both renderers: ignored


def tonemap(rgb, exposure):
    # Same display for both: linear * 2^E, then the sRGB curve, clamped (no filmic look).
    x = np.clip(rgb * 2.0 ** exposure, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def compare(ours_path, theirs_path, out_dir, name, exposure=0.0, labels=("ours", "Cycles")):
    ours, theirs = read_rgb(ours_path), read_rgb(theirs_path)
    if ours.shape != theirs.shape:
        raise SystemExit(f"size differs: {ours_path} {ours.shape} vs {theirs_path} {theirs.shape}")
    diff = ours - theirs
    lum_o, lum_t = float((ours @ REC709).mean()), float((theirs @ REC709).mean())
    stats = {
        "name": name,
        "width": ours.shape[1], "height": ours.shape[0],
        "rmse": float(np.sqrt(np.mean(diff ** 2))),
        # RMSE relative to the reference's mean value: comparable across scenes of any brightness.
        "rel_rmse": float(np.sqrt(np.mean(diff ** 2)) / max(theirs.mean(), 1e-12)),
        "luminance_ratio": lum_o / lum_t if lum_t > 0 else float("nan"),
        "mean_ours": [float(v) for v in ours.reshape(-1, 3).mean(0)],
        "mean_theirs": [float(v) for v in theirs.reshape(-1, 3).mean(0)],
    }

    # Heat map of |ours - theirs| averaged over RGB, on a scale set by the 99th percentile so a
    # few fireflies do not flatten everything else (the colour bar gives the numbers).
    err = np.abs(diff).mean(axis=2)
    vmax = float(np.percentile(err, 99)) or float(err.max()) or 1.0
    h, w = err.shape
    fig_w, fig_h = 3 * 4.0 * w / max(h, w) + 1.0, 4.0 * h / max(h, w) + 0.9
    fig, axes = plt.subplots(1, 3, figsize=(fig_w, fig_h), gridspec_kw={"width_ratios": [1, 1, 1.08]})
    axes[0].imshow(tonemap(ours, exposure), interpolation="nearest")
    axes[0].set_title(f"{labels[0]} (mean lum {lum_o:.4g})")
    axes[1].imshow(tonemap(theirs, exposure), interpolation="nearest")
    axes[1].set_title(f"{labels[1]} (mean lum {lum_t:.4g})")
    im = axes[2].imshow(err, cmap="inferno", vmin=0, vmax=vmax, interpolation="nearest")
    axes[2].set_title(f"|{labels[0]} - {labels[1]}|, RGB mean")
    fig.colorbar(im, ax=axes[2], fraction=0.046, pad=0.04, label="linear radiance")
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"{name}: RMSE {stats['rmse']:.4g} (rel {stats['rel_rmse']:.3g}), "
                 f"luminance ratio {stats['luminance_ratio']:.4f}; display 2^{exposure:g} x linear, sRGB",
                 fontsize=10)
    fig.tight_layout()
    os.makedirs(out_dir, exist_ok=True)
    png = os.path.join(out_dir, f"{name}_side_by_side.png")
    fig.savefig(png, dpi=100)
    plt.close(fig)
    stats["figure"] = png
    return stats


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("ours")
    p.add_argument("theirs")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--exposure", type=float, default=0.0)
    p.add_argument("--labels", default="ours,Cycles", help="two titles, comma-separated")
    a = p.parse_args(argv)
    stats = compare(a.ours, a.theirs, a.out_dir, a.name, a.exposure, tuple(a.labels.split(",", 1)))
    print(json.dumps(stats))
    return stats


if __name__ == "__main__":
    main()
    sys.exit(0)
