"""7. The search of the base waiting time: every repetition and the median per wait.
"""
import numpy as np
from matplotlib.lines import Line2D

from .common import (_describe, _fmt, _group, _log2_axis, _save, _select, _series_colour, _spread, _title, _value,
                    _varying_within, plt)


def plot_waitsearch(csv_path, out):
    """Window of each repetition (dots) and median (line) against the base wait; best starred."""
    func = "plot_waitsearch"
    rows = _select(csv_path, "waitsearch", func, need=("window_s", "wait"))
    extra = _varying_within(rows, ("scene", "res", "policy", "block", "cluster", "network", "spp", "threads",
                                   "max_copies"), ("wait",))
    fig, ax = plt.subplots(figsize=(8.5, 5.5))
    chosen = []
    for i, (key, srows) in enumerate(sorted(_group(rows, extra).items())):
        colour = _series_colour(i)
        label = _describe(srows[0], extra) or "median"
        ax.scatter([_value(r, "wait") for r in srows], [_value(r, "window_s") for r in srows], s=18, alpha=0.55,
                   color=colour, edgecolors="none")
        by_wait = _group(srows, ("wait",))
        ws = sorted(by_wait, key=lambda k: float(k[0]))
        meds = [_spread(by_wait[k], "window_s")[0] for k in ws]
        wx = [float(k[0]) for k in ws]
        ax.plot(wx, meds, "-", marker="_", markersize=12, color=colour, label=label)
        j = int(np.argmin(meds))
        ax.plot(wx[j], meds[j], marker="*", markersize=18, color=colour, markeredgecolor="black", zorder=5)
        ax.axvline(wx[j], color=colour, ls=":", lw=1)
        chosen.append(f"{wx[j]:g} s" + (f" ({label})" if extra else ""))
    waits = [_value(r, "wait") for r in rows]
    if min(waits) > 0 and max(waits) / min(waits) >= 8:
        _log2_axis(ax, waits)
    elif len(set(waits)) <= 12:
        ax.set_xticks(sorted(set(waits)), [_fmt(w) for w in sorted(set(waits))])
    ax.set_xlabel("base waiting time (s)")
    ax.set_ylabel("window (s), lower is better")
    ax.grid(True, alpha=0.35)
    handles, labels = ax.get_legend_handles_labels()
    handles += [Line2D([], [], ls="", marker="o", color="grey", alpha=0.55),
                Line2D([], [], ls="", marker="*", markersize=14, color="grey", markeredgecolor="black")]
    labels += ["one repetition", "chosen wait (lowest median)"]
    ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _title(ax, f"Search of the base waiting time (line = median)\nchosen: {'; '.join(chosen)}", rows,
           ("scene", "res", "spp", "cluster", "network", "policy", "block", "threads"))
    return _save(fig, out)
