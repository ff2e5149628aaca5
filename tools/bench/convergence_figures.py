"""Figures for tools/bench/convergence.py: the side-by-side images and the RMSE-vs-time plot.
Imported by convergence.py.
"""
import math

from bench.convergence_metrics import luminance
from compare import compare_images  # read_rgb, tonemap


def pyplot():
    """matplotlib's pyplot on the file-only backend (imported late: only figures need it)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(fig, png, tight=True):
    if tight:
        fig.tight_layout()
    fig.savefig(png, dpi=100)
    pyplot().close(fig)


def finish_rmse_plot(fig, ax, xlabel, title, title_size, legend_size, png):
    """The end both RMSE-vs-time plots share: axis labels, title, grid, legend, saved."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("RMSE vs own reference (linear)")
    ax.set_title(title, fontsize=title_size)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=legend_size)
    save(fig, png)


def side_by_side(case, renders, refs, spp, png):
    plt = pyplot()
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
    save(fig, png)


def rmse_plot(name, rows, png):
    plt = pyplot()
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
    finish_rmse_plot(fig, ax, "render time (s)", f"{name}: lower-left is better", 10, 8, png)


def adaptive_plot(name, rows, targets, png):
    """RMSE against time for --adaptive: each renderer's fixed-spp and adaptive series (Cycles with
    its render-call time and, hollow and thinner, its path-tracing time), and the target RMSEs."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 5.2))
    styles = (("ours", "seconds", "fixed", "ours, fixed spp", dict(color="C0", marker="o", ls="-")),
              ("ours", "seconds", "adaptive", "ours, adaptive", dict(color="C0", marker="^", ls="--")),
              ("cycles", "seconds", "fixed", "Cycles, fixed spp (render call)", dict(color="C3", marker="s", ls="-")),
              ("cycles", "seconds", "adaptive", "Cycles, adaptive (render call)", dict(color="C3", marker="v", ls="--")),
              ("cycles", "pt_seconds", "fixed", "Cycles, fixed spp (path tracing)",
               dict(color="C1", marker="s", ls="-", mfc="none", lw=0.9)),
              ("cycles", "pt_seconds", "adaptive", "Cycles, adaptive (path tracing)",
               dict(color="C1", marker="v", ls="--", mfc="none", lw=0.9)))
    for who, key, series, label, style in styles:
        pts = [(r[who].get(key), r[who]["rmse"], r[who]["label"]) for r in rows if r["series"] == series and r.get(who)]
        # In the order of the settings (noisiest first), so that a timing outlier shows as a kink.
        pts = sorted((p for p in pts if p[0] and p[0] > 0 and math.isfinite(p[1])), key=lambda p: -p[1])
        if not pts:
            continue
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], label=label, **style)
        if key == "seconds":
            for t, e, lab in pts:
                ax.annotate(lab, (t, e), textcoords="offset points", xytext=(4, 3), fontsize=6.5,
                            color=style["color"])
    for t in targets:
        ax.axhline(t, color="0.6", lw=0.7, ls=":")
        ax.annotate(f"target {t:g}", (0.99, t), xycoords=("axes fraction", "data"), ha="right", va="bottom",
                    fontsize=7, color="0.4")
    finish_rmse_plot(fig, ax, "time (s): ours render phase; Cycles render call or path tracing",
                     f"{name}: lower-left is better (labels: spp, or threshold t/max spp)", 9, 7, png)


def sample_count_maps(name, maps, png):
    """maps: [(title, counts 2D)] for ours' and then Cycles' adaptive settings: log2 of the samples
    each pixel took, one colour scale for all."""
    plt = pyplot()
    import numpy as np
    if not maps:
        return
    cols = max(len([m for m in maps if m[0].startswith("ours")]), len([m for m in maps if not m[0].startswith("ours")]))
    rows = [[m for m in maps if m[0].startswith("ours")], [m for m in maps if not m[0].startswith("ours")]]
    lo = min(float(np.log2(max(c.min(), 1))) for _, c in maps)
    hi = max(float(np.log2(c.max())) for _, c in maps)
    fig, axes = plt.subplots(2, cols, figsize=(2.6 * cols + 0.8, 5.8), squeeze=False)
    im = None
    for r, row in enumerate(rows):
        for k in range(cols):
            ax = axes[r][k]
            ax.set_xticks([])
            ax.set_yticks([])
            if k >= len(row):
                ax.axis("off")
                continue
            title, c = row[k]
            im = ax.imshow(np.log2(np.maximum(c, 1)), vmin=lo, vmax=hi, cmap="viridis", interpolation="nearest")
            ax.set_title(f"{title}\nmean {c.mean():.0f} spp", fontsize=8)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label="log2(samples taken)")
    fig.suptitle(f"{name}: samples per pixel, top ours, bottom Cycles", fontsize=10)
    save(fig, png, tight=False)
