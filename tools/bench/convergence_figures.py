"""Figures for tools/bench/convergence.py: the side-by-side images and the RMSE-vs-time plot.
Imported by convergence.py.
"""
import math

from bench.convergence_metrics import luminance
from compare import compare_images  # read_rgb, tonemap

def side_by_side(case, renders, refs, spp, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    e = float(case.get("exposure", 0.0))
    ours = compare_images.read_rgb(renders[("test", spp)]["ours"]["exr"])
    cyc = compare_images.read_rgb(renders[("test", spp)]["cycles"]["exr"])
    panels = [(ours, f"ours, {spp} spp"), (cyc, f"Cycles, {spp} spp"),
              (refs["ours"]["img"], "our reference"), (refs["cycles"]["img"], "Cycles' reference")]
    h, w = ours.shape[:2]
    fig, axes = plt.subplots(1, 4, figsize=(4 * 3.2 * w / max(h, w) + 0.4, 3.2 * h / max(h, w) + 0.8))
    for ax, (img, title) in zip(axes, panels):
        ax.imshow(compare_images.tonemap(img, e), interpolation="nearest")
        ax.set_title(f"{title}\nmean lum {float(luminance(img).mean()):.4g}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"{case['name']}: display 2^{e:g} x linear, sRGB, clamped (same for all four)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def rmse_plot(name, rows, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    for who, label, key, style in (("ours", "ours (render phase)", "seconds", "o-"),
                                   ("cycles", "Cycles (render call)", "seconds", "s-"),
                                   ("cycles", "Cycles (path tracing only)", "pt_seconds", "s--")):
        pts = [(r[who].get(key), r[who]["rmse"], r["spp"]) for r in rows]
        pts = [p for p in pts if p[0] and p[0] > 0 and math.isfinite(p[1])]
        if not pts:
            continue
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], style, label=label,
                  mfc="none" if key == "pt_seconds" else None)
        if key == "seconds":
            for t, e, spp in pts:
                ax.annotate(str(spp), (t, e), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax.set_xlabel("render time (s)")
    ax.set_ylabel("RMSE vs own reference (linear)")
    ax.set_title(f"{name}: lower-left is better", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
