"""4. Round trip per block against block side (the paper's Table 1) and 5. how the best block
side moves with network latency: both one line per network, ordered by one-way delay.
"""
import math

import numpy as np
from matplotlib.lines import Line2D

from .common import (_context, _delay_ms, _describe, _group, _key, _log2_axis, _log_y, _network_label, _save,
                    _select, _series_colour, _spread, _title, _value, _varying_within, _yerr, plt)


def _networks(rows):
    return sorted({_key(r, "network") for r in rows}, key=lambda n: (_delay_ms(n), n))


def _network_lines(ax, rows, metric):
    """Median `metric` against block, colour per network (ordered by delay), line style per other
    varying setting; returns {(network, other settings): (best block, its median, colour, style)}."""
    extra = _varying_within(rows, ("scene", "res", "spp", "policy", "wait", "cluster", "threads", "max_copies"),
                            ("network", "block"))
    styles = {k: ("-", "--", ":", "-.")[i % 4] for i, k in enumerate(sorted(_group(rows, extra)))}
    best = {}
    for i, net in enumerate(_networks(rows)):
        for other, srows in sorted(_group([r for r in rows if _key(r, "network") == net], extra).items()):
            by_block = _group(srows, ("block",))
            xs = sorted(by_block, key=lambda k: float(k[0]))
            meds, los, his = zip(*[_spread(by_block[k], metric) for k in xs])
            bx = [float(k[0]) for k in xs]
            label = _network_label(net) + (f", {_describe(srows[0], extra)}" if extra else "")
            ax.errorbar(bx, meds, yerr=_yerr(meds, los, his), marker="o", capsize=3, color=_series_colour(i),
                        ls=styles[other], label=label)
            j = int(np.argmin(meds))
            best[(net, _describe(srows[0], extra))] = (bx[j], meds[j], _series_colour(i), styles[other])
    return best


def plot_rtt_vs_block(csv_path, out):
    """Round trip per block (null renderer) against block side, per network (paper Table 1)."""
    func = "plot_rtt_vs_block"
    rows = _select(csv_path, "rtt", func, need=("rtt_us", "block"), modes=("null",))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    _network_lines(ax, rows, "rtt_us")
    _log2_axis(ax, [_value(r, "block") for r in rows])
    _log_y(ax)
    ax.set_xlabel("block side (pixels)")
    ax.set_ylabel("median round trip per block (µs)")
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", axis="y", alpha=0.15)
    ax.legend(loc="upper left")
    _title(ax, "Round trip per block with a null renderer", rows, ("cluster", "threads"))
    return _save(fig, out)


def plot_latency_best_block(csv_path, out):
    """Median window against block side per network, best block starred; right: best block per network."""
    func = "plot_latency_best_block"
    rows = _select(csv_path, "latency", func, need=("window_s", "block"))
    fig, (ax, bx_ax) = plt.subplots(1, 2, figsize=(12, 5.5), gridspec_kw={"width_ratios": [2.3, 1]},
                                    layout="constrained")
    best = _network_lines(ax, rows, "window_s")
    for bx, by, colour, _ in best.values():
        ax.plot(bx, by, marker="*", markersize=16, color=colour, markeredgecolor="black", zorder=5)
    blocks = [_value(r, "block") for r in rows]
    _log2_axis(ax, blocks)
    windows = [_value(r, "window_s") for r in rows]
    if min(windows) > 0 and max(windows) / min(windows) > 5:
        _log_y(ax)
    ax.set_xlabel("block side (pixels)")
    ax.set_ylabel("median window (s), lower is better")
    ax.grid(True, which="both", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], ls="", marker="*", markersize=14, color="grey", markeredgecolor="black"))
    labels.append("best block of the network")
    ax.legend(handles, labels, loc="best", fontsize=8)
    ax.set_title("Median window against block side", fontsize=10)
    nets = _networks(rows)
    others = sorted({o for _, o in best})
    for k, other in enumerate(others):
        shift = (k - (len(others) - 1) / 2) * 0.12  # side by side where series agree
        pts = [(nets.index(n) + shift, best[(n, o)][0], best[(n, o)][2]) for n, o in best if o == other]
        xs, ys, cs = zip(*pts)
        style = next(v[3] for (n, o), v in best.items() if o == other)
        bx_ax.plot(xs, ys, color="grey", ls=style, lw=1.2, label=other or None)
        bx_ax.scatter(xs, ys, marker="*", s=260, c=cs, edgecolors="black", zorder=5)
    _log2_axis(bx_ax, blocks, axis="y")
    bx_ax.set_xticks(range(len(nets)), [n if math.isinf(_delay_ms(n)) else f"{n}\n{_delay_ms(n):g} ms"
                                        for n in nets], fontsize=8)
    bx_ax.set_xlim(-0.5, len(nets) - 0.5)
    bx_ax.set_xlabel("network (one-way delay)")
    bx_ax.set_ylabel("best block side (pixels)")
    bx_ax.grid(True, alpha=0.3)
    if any(o for _, o in best):
        bx_ax.legend(fontsize=8)
    bx_ax.set_title("Best block per network", fontsize=10)
    ctx = _context(rows, ("scene", "res", "spp", "cluster", "policy", "wait", "threads"))
    fig.suptitle(f"How the best block size moves with network latency\n{ctx}", fontsize=12)
    return _save(fig, out)
