"""What every plot shares: the matplotlib setup, colours, labels made of the sweep's settings,
axes helpers and saving. The sweep data itself is read and aggregated by farmtools.sweep_data
(re-exported here under the short names the plot modules use).
"""
import math
import os

import matplotlib
import numpy as np

matplotlib.use("Agg")  # files only, no display; before pyplot, which the plot modules take from here
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

from farmtools.networks import PRESETS as NETWORK_PRESETS, one_way_delay_ms as _delay_ms  # noqa: E402
# Imported here once for every plot module, under the names the plots were written with.
from farmtools.sweep_data import (best_config, configs as _configs, experiment_rows as _select, fmt as _fmt,  # noqa: E402,F401
                                  group as _group, metric as _value, num as _num, policies as _policies,
                                  setting as _key, spread as _spread, varying as _varying,
                                  varying_within as _varying_within)

DPI = 120
POLICY_COLOURS = {"fixed": "tab:blue", "seed": "tab:orange", "adaptive": "tab:green"}
POLICY_CMAPS = {"fixed": "Blues", "seed": "Oranges", "adaptive": "Greens"}
BLOCK_SIDES = (4, 8, 16, 32, 64, 128, 256)


def _yerr(meds, los, his):
    meds, los, his = (np.asarray(a, dtype=float) for a in (meds, los, his))
    return np.vstack([meds - los, his - meds])


_LABELS = {"spp": "{} spp", "policy": "policy {}", "block": "block {}", "min_block": "min block {}",
           "wait": "wait {} s", "max_copies": "max copies {}", "cluster": "cluster {}", "workers": "{} workers",
           "network": "network {}", "threads": "threads/worker {}", "speeds": "speeds {}"}


def _describe(row, cols):
    parts = []
    for c in cols:
        v = _key(row, c)
        if v:
            parts.append(_LABELS.get(c, "{}").format(v))
    return ", ".join(parts)


def _context(rows, cols=("scene", "res", "spp", "cluster", "network", "policy", "block", "wait", "threads")):
    """The settings that are the same in every row, as text for a title."""
    same = [c for c in cols if c not in _varying(rows, cols)]
    return _describe(rows[0], same)


# ----------------------------------------------------------------------------- axes helpers
def _network_label(network):
    d = _delay_ms(network)
    if network == "loopback" or network in NETWORK_PRESETS or ("," in network and math.isfinite(d)):
        return f"{network} ({d:g} ms one way)"
    return network


def _log2_axis(ax, values, axis="x"):
    """Log-2 axis with ticks at exactly the given values."""
    vals = sorted(set(values))
    getattr(ax, f"set_{axis}scale")("log", base=2)
    getattr(ax, f"set_{axis}ticks")(vals)
    getattr(ax, f"set_{axis}ticklabels")([_fmt(v) for v in vals])
    getattr(ax, f"{axis}axis").set_minor_locator(NullLocator())
    lo, hi = vals[0], vals[-1]
    getattr(ax, f"set_{axis}lim")(lo / 1.3, hi * 1.3)


def _log_y(ax):
    """Log y axis labelled 1, 2, 5, 10, 20, ... in plain numbers (a narrow range gets no decade tick)."""
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _title(ax, main, rows, cols=None):
    ctx = _context(rows) if cols is None else _context(rows, cols)
    ax.set_title(main + (f"\n{ctx}" if ctx else ""), fontsize=11)


def _save(fig, out):
    d = os.path.dirname(os.path.abspath(out))
    os.makedirs(d, exist_ok=True)
    fig.savefig(out, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return out


def _series_colour(i):
    return plt.get_cmap("tab10")(i % 10)


def _wait_sort(w):
    """Waits ascending; '' (fixed policy: no wait) first, other text after the numbers."""
    v = _num(w)
    return (0, v, w) if v is not None else ((-1 if w == "" else 1), 0.0, w)


def _best_config(rows):
    """(median window, rows of the configuration with the lowest median window)."""
    _, crows, med = best_config(rows)
    return med, crows
