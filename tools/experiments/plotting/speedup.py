"""1. Speedup against the number of workers (the paper's Figure 11).
"""
from .common import (_describe, _group, _save, _select, _series_colour, _spread, _title, _value, _varying_within,
                    _yerr, plt)


def plot_speedup_vs_workers(csv_path, out):
    """Median speedup against worker count, one line per scene, dashed ideal (paper Figure 11)."""
    func = "plot_speedup_vs_workers"
    rows = _select(csv_path, "speedup", func, need=("workers", "speedup"))
    extra = _varying_within(rows, ("res", "spp", "policy", "block", "wait", "network", "threads"), ("workers",))
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for i, (key, srows) in enumerate(sorted(_group(rows, ("scene", *extra)).items())):
        by_n = _group(srows, ("workers",))
        xs = sorted(by_n, key=lambda k: float(k[0]))
        stats = [_spread(by_n[k], "speedup") for k in xs]
        meds, los, his = zip(*stats)
        label = key[0] + (f" ({_describe(srows[0], extra)})" if extra else "")
        ax.errorbar([float(k[0]) for k in xs], meds, yerr=_yerr(meds, los, his), marker="o", capsize=4,
                    color=_series_colour(i), label=label)
    ideal_rows = [r for r in rows if _value(r, "ideal") is not None]
    if ideal_rows:
        by_n = _group(ideal_rows, ("workers",))
        xs = sorted(by_n, key=lambda k: float(k[0]))
        ax.plot([float(k[0]) for k in xs], [_spread(by_n[k], "ideal")[0] for k in xs], "k--", lw=1.3,
                label="ideal (single / lower bound)")
    ns = sorted({int(_value(r, "workers")) for r in rows})
    ax.set_xticks(ns)
    ax.set_xlim(min(ns) - 0.3, max(ns) + 0.3)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("workers")
    ax.set_ylabel("speedup (single-node time / farm window)")
    ax.grid(True, alpha=0.35)
    ax.legend(loc="upper left")
    _title(ax, "Speedup against the number of workers", rows,
           ("res", "spp", "cluster", "network", "policy", "block", "wait", "threads"))
    return _save(fig, out)
