"""3. Best fixed block vs halving vs adaptive per resolution (the paper's Figure 13) and
6. every policy configuration per scene, normalised to the scene's best fixed block.
"""
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .common import (POLICY_CMAPS, POLICY_COLOURS, _best_config, _describe, _group, _key, _policies, _save, _select,
                    _spread, _title, _value, _varying, _varying_within, _wait_sort, plt)


def _config_label(crows, all_rows, always=("block",)):
    cols = [c for c in ("block", "wait", "min_block", "max_copies") if c in always or c in _varying(all_rows, (c,))]
    return _describe(crows[0], cols).replace("block ", "B=").replace("wait ", "w=").replace(" s", "s")


def plot_adaptive_vs_fixed(csv_path, out):
    """Speedup of best fixed block vs seed vs adaptive, per resolution (paper Figure 13)."""
    func = "plot_adaptive_vs_fixed"
    rows = _select(csv_path, "resolution", func, need=("window_s", "speedup"))
    extra = _varying_within(rows, ("scene", "cluster", "network", "spp"), ("res",))
    groups = sorted(_group(rows, ("res", *extra)).items(),
                    key=lambda kv: (_value(kv[1][0], "width") * _value(kv[1][0], "height"), kv[0]))
    policies = _policies(rows)
    width = 0.8 / len(policies)
    fig, ax = plt.subplots(figsize=(max(7.0, 1.0 + len(groups) * len(policies) * 0.9), 5.8))
    top = 0.0
    for gi, (gkey, grows) in enumerate(groups):
        by_policy = _group(grows, ("policy",))
        fixed = _best_config(by_policy[("fixed",)])[0] if ("fixed",) in by_policy else None
        present = [p for p in policies if (p,) in by_policy]
        for pi, p in enumerate(present):
            med_w, crows = _best_config(by_policy[(p,)])
            med, lo, hi = _spread(crows, "speedup")
            x = gi + (pi - (len(present) - 1) / 2) * width
            ax.bar(x, med, width * 0.92, color=POLICY_COLOURS.get(p, "tab:purple"), alpha=0.85,
                   yerr=[[med - lo], [hi - med]], capsize=4, ecolor="black")
            label = _config_label(crows, by_policy[(p,)], always=("block",) if p == "fixed" else ())
            if label:
                ax.text(x, med * 0.04, label, rotation=90, ha="center", va="bottom", fontsize=8)
            if p != "fixed" and fixed:
                pct = (fixed / med_w - 1) * 100
                ax.text(x, hi * 1.02, f"{pct:+.1f}%", ha="center", va="bottom", fontsize=9, fontweight="bold",
                        color="darkgreen" if pct >= 0 else "firebrick")
            top = max(top, hi * 1.12)
        ideal_rows = [r for r in grows if _value(r, "ideal") is not None]
        if ideal_rows:
            ideal = _spread(ideal_rows, "ideal")[0]
            ax.hlines(ideal, gi - 0.45, gi + 0.45, colors="black", lw=2.5)
            top = max(top, ideal * 1.08)
    ax.set_xticks(range(len(groups)), [" ".join(k) for k, _ in groups])
    ax.set_ylim(0, top)
    ax.set_xlabel("image resolution (pixels)" + (f" and {', '.join(extra)}" if extra else ""))
    ax.set_ylabel("median speedup (single-node time / farm window)")
    ax.grid(True, axis="y", alpha=0.35)
    handles = [Patch(color=POLICY_COLOURS.get(p, "tab:purple"), alpha=0.85, label="best fixed" if p == "fixed" else p)
               for p in policies]
    handles.append(Line2D([], [], color="black", lw=2.5, label="ideal (single / lower bound)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _title(ax, "Best fixed block size vs halving (seed) vs adaptive\n"
           "% = change of median window against best fixed (+ is faster)", rows,
           ("scene", "spp", "cluster", "network", "threads"))
    return _save(fig, out)


def _scene_configs(rows):
    """Sorted list of (policy, block, wait) settings present, wait '' where it never varies."""
    keys = {(_key(r, "policy"), _key(r, "block"), _key(r, "wait")) for r in rows}
    vary_wait = {p for p in {k[0] for k in keys} if len({k[2] for k in keys if k[0] == p}) > 1}
    keys = {(p, b, w if p in vary_wait else "") for p, b, w in keys}
    order = {p: i for i, p in enumerate(_policies(rows))}
    return sorted(keys, key=lambda k: (order[k[0]], float(k[1]) if k[1] else 0.0, _wait_sort(k[2])))


def _config_colour(cfg, cfgs):
    same = [c for c in cfgs if c[0] == cfg[0]]
    shade = 0.45 + 0.45 * (same.index(cfg) / max(1, len(same) - 1))
    return plt.get_cmap(POLICY_CMAPS.get(cfg[0], "Purples"))(shade)


def plot_scene_policies(csv_path, out):
    """Per scene, median window of every (policy, block) config over the scene's best fixed one."""
    func = "plot_scene_policies"
    rows = _select(csv_path, "scenes", func, need=("window_s",))
    cfgs = _scene_configs(rows)
    scenes = sorted({_key(r, "scene") for r in rows})
    width = 0.84 / len(cfgs)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.2 + len(scenes) * len(cfgs) * 0.42), 5.8))
    ticks, top = [], 1.1
    for si, scene in enumerate(scenes):
        srows = [r for r in rows if _key(r, "scene") == scene]
        fixed = [r for r in srows if _key(r, "policy") == "fixed"]
        ref = _best_config(fixed or srows)[0]
        ticks.append(scene if fixed else f"{scene}*")
        for ci, cfg in enumerate(cfgs):
            crows = [r for r in srows if (_key(r, "policy"), _key(r, "block")) == cfg[:2]
                     and (not cfg[2] or _key(r, "wait") == cfg[2])]
            if not crows:
                continue
            med, lo, hi = (v / ref for v in _spread(crows, "window_s"))
            x = si + (ci - (len(cfgs) - 1) / 2) * width
            ax.bar(x, med, width * 0.9, color=_config_colour(cfg, cfgs), yerr=[[med - lo], [hi - med]],
                   capsize=2, ecolor="black", error_kw={"lw": 0.8})
            ax.text(x, hi + 0.02, f"{med:.2f}", ha="center", va="bottom", fontsize=7,
                    rotation=90 if len(cfgs) > 3 else 0)
            top = max(top, hi + 0.18)
    ax.axhline(1.0, color="black", ls="--", lw=1)
    ax.set_xticks(range(len(scenes)), ticks)
    ax.set_ylim(0, top)
    note = "  (* no fixed run: normalised to the scene's best run)" if any("*" in t for t in ticks) else ""
    ax.set_xlabel("scene" + note)
    ax.set_ylabel("median window / best fixed window (lower is better)")
    ax.grid(True, axis="y", alpha=0.35)
    handles = [Patch(color=_config_colour(c, cfgs), label=" ".join(v for v in (c[0], f"block {c[1]}",
                                                                            f"wait {c[2]} s" if c[2] else "") if v))
               for c in cfgs]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="policy, initial block")
    _title(ax, "Policies per scene, normalised to the scene's best fixed block size", rows,
           ("res", "spp", "cluster", "network", "threads"))
    return _save(fig, out)
