"""2. Median window over initial block side x base waiting time, one panel per policy.
"""
import math

import matplotlib
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .common import (_configs, _context, _describe, _group, _key, _policies, _save, _select, _spread,
                    _varying_within, _wait_sort, plt)


def _heat_cell(ax, x, y, v, norm, cmap):
    r, g, b, _ = cmap(norm(v))
    colour = "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"
    ax.text(x, y, "%.2f" % v, ha="center", va="center", fontsize=8, color=colour)


def plot_heatmap_block_wait(csv_path, out):
    """Median window over block side x waiting time, best cell outlined, one panel per policy."""
    func = "plot_heatmap_block_wait"
    rows = _select(csv_path, "heatmap", func, need=("window_s", "block"))
    facet_cols = _varying_within(rows, ("scene", "res", "cluster", "network", "spp", "threads", "max_copies",
                                        "min_block"), ("block", "wait")) + ["policy"]
    order = {p: i for i, p in enumerate(_policies(rows))}
    facets = sorted(_group(rows, facet_cols).items(), key=lambda kv: (kv[0][:-1], order[kv[0][-1]]))
    blocks = sorted({_key(r, "block") for r in rows}, key=float)
    waits = sorted({_key(r, "wait") for r in rows}, key=_wait_sort)
    grids = []
    for _, frows in facets:
        m = np.full((len(waits), len(blocks)), np.nan)
        for (b, w), crows in _group(frows, ("block", "wait")).items():
            # several configurations in one cell (e.g. max_copies varies): keep the best median
            med = min(_spread(c, "window_s")[0] for c in _configs(crows).values())
            m[waits.index(w), blocks.index(b)] = med
        grids.append(m)
    vmin = min(np.nanmin(g) for g in grids)
    vmax = max(np.nanmax(g) for g in grids)
    if vmin > 0 and vmax / vmin > 3:  # one terrible corner would flatten the rest of the scale
        norm = matplotlib.colors.LogNorm(vmin=vmin, vmax=vmax)
    else:
        pad = 0.0 if vmax > vmin else 0.05 * abs(vmin) + 1e-6  # one value: still a sensible scale
        norm = matplotlib.colors.Normalize(vmin=vmin - pad, vmax=vmax + pad)
    cmap = matplotlib.colormaps["viridis_r"].copy()
    cmap.set_bad("#e0e0e0")
    ncols = min(3, len(facets))
    nrows = math.ceil(len(facets) / ncols)
    cell_w, cell_h = 0.9, 0.5
    size = (max(7.0, ncols * (cell_w * len(blocks) + 1.4) + 1.2), nrows * (cell_h * len(waits) + 1.6) + 0.6)
    fig, axes = plt.subplots(nrows, ncols, squeeze=False, layout="constrained", figsize=size)
    for ax, (_, frows), m in zip(axes.flat, facets, grids):
        im = ax.imshow(np.ma.masked_invalid(m), origin="lower", cmap=cmap, norm=norm, aspect="auto")
        for (yi, xi), v in np.ndenumerate(m):
            if np.isfinite(v):
                _heat_cell(ax, xi, yi, v, norm, cmap)
            else:
                ax.text(xi, yi, "–", ha="center", va="center", fontsize=8, color="grey")
        yi, xi = np.unravel_index(np.nanargmin(m), m.shape)
        ax.add_patch(Rectangle((xi - 0.5, yi - 0.5), 1, 1, fill=False, edgecolor="red", lw=3))
        ax.set_xticks(range(len(blocks)), blocks)
        ax.set_yticks(range(len(waits)), [w if w else "n/a" for w in waits])
        ax.set_xlabel("initial block side (pixels)")
        ax.set_ylabel("base waiting time (s)")
        wait = f"wait {waits[yi]} s" if waits[yi] else "no wait"
        best = f"best: block {blocks[xi]}, {wait} → {m[yi, xi]:.2f} s"
        ax.set_title(f"{_describe(frows[0], facet_cols)}\n{best}", fontsize=10)
    for ax in list(axes.flat)[len(facets):]:
        ax.set_visible(False)
    log = isinstance(norm, matplotlib.colors.LogNorm)
    cbar = fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.9,
                        label="median window (s), lower is better" + (" (log scale)" if log else ""))
    if log:
        cbar.ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        cbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        cbar.ax.yaxis.set_minor_formatter(NullFormatter())
    ctx = _context(rows, ("scene", "res", "spp", "cluster", "network", "threads"))
    fig.suptitle(f"Median window over block side and waiting time\n{ctx}", fontsize=12)
    return _save(fig, out)
