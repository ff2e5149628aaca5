"""The scale study's page and plots (tools/sim/scale_study.py): tables of makespan / honest bound
per scenario (rows N, columns policies), the secondary metrics, a "what the data shows" paragraph
computed from the numbers, and one figure per cost map."""
import os
import statistics

from sim import scale_grid as g

LABELS = [p.label for p in g.POLICIES]
ADAPTIVE = [p.label for p in g.POLICIES if not p.fixed]
YMAX, YTICKS = 20, (1, 1.2, 1.5, 2, 3, 5, 10, 20)


def _f(v, digits=2):
    return "DNF" if v is None else f"{v:.{digits}f}"


def cell(c, digits=2):
    """'median / worst' of a summarise() cell ('1.23' alone for one run; DNF: did not complete)."""
    if c is None:
        return ""
    if c["runs"] == 1:
        return _f(c["median"], digits)
    return f"{_f(c['median'], digits)} / {_f(c['worst'], digits)}"


def scenario_keys(rows):
    order = {k: i for i, k in enumerate(["chess2", "flat", "cornell"])}
    keys = sorted({(r["map"], r["cluster"], r["network"]) for r in rows},
                  key=lambda k: (order.get(k[0], 9), k[0], list(g.CLUSTERS).index(k[1]), list(g.NETWORKS).index(k[2])))
    return keys


def sizes(rows, key):
    return sorted({int(r["workers"]) for r in rows if (r["map"], r["cluster"], r["network"]) == key})


def table(rows, summary, key, columns, fmt=cell, best=True):
    head = ["N"] + ([g.BEST_FIXED] if best else []) + columns
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in sizes(rows, key):
        cells = summary.get(key + (n,), {})
        line = [str(n)]
        if best:
            b = cells.get(g.BEST_FIXED)
            line.append(f"{fmt(b)} (S0={b['label'].split('-')[1]})" if b else "")
        line += [fmt(cells.get(c)) for c in columns]
        out.append("| " + " | ".join(line) + " |")
    return "\n".join(out) + "\n"


def setup_section(rows, meta):
    c = g.CLUSTERS
    lines = ["## Setup\n",
             f"- Weak scaling: at every N the job's work / the drawn cluster's total speed (as `farm sim` prints it, "
             f"3 digits) is {meta['ideal_s']:g} s (the ideal length): frames grow with N so that there are at least {g.BLOCKS_PER_WORKER} S0=32 blocks "
             "per worker, and --work-factor scales the cost map so that the work matches. The honest bound, not "
             "the ideal length, is what each makespan is divided by: its range below shows what start-ups, late "
             "joiners and failures add.",
             "- Clusters: " + ", ".join(f"`{k}` speed {lo:g}" + (f"..{hi:g} (uniform per worker)" if hi > lo else "")
                                        for k, (lo, hi) in c.items()) + ". Networks: "
             + ", ".join(f"`{k}` one-way latency {lat[0]:g}" + (f"..{lat[1]:g}" if lat[1] > lat[0] else "")
                         + f" ms, {bw} Mbit/s per worker" for k, (lat, bw) in g.NETWORKS.items()) + ".",
             f"- Every worker starts up in {g.STARTUP_S[0]:g}..{g.STARTUP_S[1]:g} s; {g.LATE_SHARE:.0%} join at a "
             f"uniform time in the first {g.LATE_WINDOW:.0%} of the ideal length; {g.FAIL_SHARE:.0%} go silent at a "
             f"uniform time in {g.FAIL_WINDOW[0]:.0%}..{g.FAIL_WINDOW[1]:.0%} of it (counts rounded half up, so "
             f"none fail at N <= 10 and none join late at N = 2). Per-block overhead {g.PER_BLOCK_OVERHEAD_MS:g} ms, "
             f"wait {g.WAIT_S} s, max copies {g.MAX_COPIES}.",
             "- Policies (tools/sim/scale_grid.py POLICIES): " + ", ".join(
                 f"`{p.label}` (--policy {p.policy} --block {p.block}{' ' + ' '.join(p.extra) if p.extra else ''})"
                 for p in g.POLICIES) + f". `{g.BEST_FIXED}` is the fixed S0 with the lowest median makespan in that row "
             "(its S0 in brackets; makespan rather than the ratio, as each run's bound counts the per-block overhead "
             "of its own S0's tiles); with --cost-model the scheduler knows every block's cost from the map, as a "
             "preview render would tell it.",
             "- Cost maps: " + "; ".join(
                 f"`{k}`: " + (f"`{v}`" if v else "uniform (every tile the same cost, written by scale_grid.flat_cost_map)")
                 for k, v in meta["maps"].items()) + (
                 f". The Cornell map was made with `{meta['pt_map_command']}` (path tracing, 5 s)."
                 if "cornell" in meta["maps"] else "."),
             "- `factoring+preview` predicts block costs from what a master's preview would measure (a quarter "
             "of the size, 1 spp, timed on one thread; the flat map, having no scene, is its own preview): "
             + "; ".join(f"{k}: `{v}`" for k, v in meta.get("preview_commands", {}).items())
             + ". The run itself still costs what the full map says.",
             "- Honest bound (farm/control/makespan_bound.h): each worker counted from its join + start-up + first "
             "round trip until it fails, plus its last result's trip, and never below the costliest min-block. "
             "Plain bound: total work / total speed from time zero.", ""]
    head = ["N", "frames", "image", "S0=32 blocks per worker", "late joiners", "failing", "seeds",
            "honest bound (s), min..max"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in sorted({int(r["workers"]) for r in rows}):
        r0 = next(r for r in rows if int(r["workers"]) == n)
        per = r0["frames"] * g.blocks_per_frame(int(r0["width"]), int(r0["height"]), 32) / n
        _, late, failing = g.group_counts(n)
        seeds = sorted({r["seed"] for r in rows if int(r["workers"]) == n})
        bounds = [r["bound_honest_s"] for r in rows if int(r["workers"]) == n and r.get("bound_honest_s")] or [0.0]
        scen = sorted({(r["cluster"], r["network"]) for r in rows if int(r["workers"]) == n})
        note = "" if len(scen) == len(g.CLUSTERS) * len(g.NETWORKS) else " (only " + ", ".join(
            f"{a}-{b}" for a, b in scen) + ")"
        lines.append(f"| {n}{note} | {r0['frames']} | {r0['width']}x{r0['height']} | {per:.0f} | {late} | {failing} | "
                     f"{', '.join(map(str, seeds))} | {min(bounds):.1f}..{max(bounds):.1f} |")
    return "\n".join(lines) + "\n"


def findings(rows, summary):
    """Sentences that only restate the numbers of the tables."""
    out = []
    makespans = g.summarise(rows, metric="makespan_s", with_best=False)
    ns = sorted({k[3] for k in summary})
    for n in ns:
        keys = [k for k in summary if k[3] == n]
        wins = {}
        for k in keys:
            cand = [(c["median"], lab) for lab, c in makespans[k].items() if c["median"]]
            if cand:
                wins.setdefault(min(cand)[1], []).append(k)
        best_s0 = sorted({summary[k][g.BEST_FIXED]["label"].split("-")[1] for k in keys if g.BEST_FIXED in summary[k]},
                         key=int)
        parts = [f"{lab} in {len(v)}" for lab, v in sorted(wins.items(), key=lambda kv: -len(kv[1]))]
        ranges = []
        for lab in [g.BEST_FIXED] + ADAPTIVE:
            meds = [summary[k][lab]["median"] for k in keys if summary[k].get(lab) and summary[k][lab]["median"]]
            dnf = sum(1 for k in keys if summary[k].get(lab) and summary[k][lab]["median"] is None)
            if meds:
                ranges.append(f"{lab} {min(meds):.2f}..{max(meds):.2f}" + (f" (+{dnf} DNF)" if dnf else ""))
        out.append(f"- N = {n} ({len(keys)} scenarios): shortest median makespan: {', '.join(parts)}. "
                   f"Median makespan / honest bound ranges over the scenarios: {'; '.join(ranges)}. "
                   f"Best fixed S0: {', '.join(best_s0)}.")
    best = g.best_fixed(rows)
    for lab in ADAPTIVE:
        cnt = sum(1 for k, cells in makespans.items() if cells.get(lab) and cells[lab]["median"] and best.get(k)
                  and cells[lab]["median"] <= cells[best[k]]["median"])
        out.append(f"- `{lab}`'s median makespan is at or below the best fixed S0's in {cnt} of {len(makespans)} "
                   "scenario x N cells.")
    vs = [r for r in rows if r.get("vs_best_fixed") is not None and r["policy"] in ADAPTIVE]
    for lab in ADAPTIVE:
        v = [r["vs_best_fixed"] for r in vs if r["policy"] == lab]
        if v:
            out.append(f"- `{lab}` makespan / best fixed makespan over all runs: median {statistics.median(v):.2f}, "
                       f"range {min(v):.2f}..{max(v):.2f}.")
    below = [r for r in rows if r.get("ratio_honest") is not None and r["ratio_honest"] < 1]
    out.append(f"- Runs that finished before their honest bound: {len(below)}" + (
        " (clusters " + ", ".join(sorted({r["cluster"] for r in below})) + "; N = "
        + ", ".join(str(n) for n in sorted({int(r["workers"]) for r in below}))
        + f"; lowest ratio {min(r['ratio_honest'] for r in below):.3f}). A lower bound that a run beats is not "
        "one: farm/sim/simulator.cpp simulated_bound() adds the per-block overhead to the work W in work units, "
        "which the fluid equation divides by each worker's speed, while the simulator charges the overhead in "
        "seconds whatever the speed; at speeds below 1 the bound counts it up to 10 times over. The overhead is "
        f"{share(rows, lambda n: n <= 10):.1%} of the work at most at N <= 10 and "
        f"{share(rows, lambda n: n >= 100):.2%} at N >= 100"
        if below else "") + ".")
    failed = [r for r in rows if not r.get("completed")]
    out.append(f"- Runs that did not complete: {len(failed)}" + (": " + "; ".join(
        f"{r['map']} {r['cluster']}-{r['network']} N={r['workers']} {r['policy']} seed {r['seed']}" for r in failed[:10])
        if failed else "") + ".")
    return "\n".join(out) + "\n"


def share(rows, which):
    """The largest share of the per-block overhead (one block per S0 tile) in a run's work W."""
    return max([r["frames"] * g.blocks_per_frame(r["width"], r["height"], r["block"]) * g.PER_BLOCK_OVERHEAD_MS
                / 1e3 / r["work_s"] for r in rows if which(int(r["workers"])) and r.get("work_s")] or [0.0])


def write_markdown(rows, path, meta):
    summary = g.summarise(rows)
    doc = [f"# Scale study (simulated, weak scaling)\n\nCommand: `{meta['command']}`  \nDate: {meta['date']}  \n"
           f"farm built from commit {meta['commit']}; {len(rows)} sims, {meta['jobs']} at once, "
           f"{meta['wall_s'] / 60:.1f} min wall.\n", setup_section(rows, meta),
           "## Makespan / honest bound\n\nCells: median / worst over the seeds (one value where one seed ran; DNF: "
           "did not complete). 1.00 would be a schedule as good as the bound; the bound itself is not reachable "
           "(no block overhead, work as a fluid).\n"]
    for key in scenario_keys(rows):
        doc.append(f"### {key[0]}, {key[1]}, {key[2]}\n\n" + table(rows, summary, key, LABELS))
    doc.append("## Makespan / best fixed makespan\n\nThe same seed's run of the best fixed S0 (the one of the table "
               "above) divides each run's makespan; median / worst. Below 1: better than any one fixed S0 chosen "
               "for the scenario.\n")
    vs = g.summarise(rows, metric="vs_best_fixed", with_best=False)
    head = ["scenario", "N"] + ADAPTIVE
    doc.append("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for key in scenario_keys(rows):
        for n in sizes(rows, key):
            doc.append(f"| {' '.join(key)} | {n} | " + " | ".join(cell(vs.get(key + (n,), {}).get(c)) for c in ADAPTIVE)
                       + " |")
    plain = g.summarise(rows, metric="ratio_plain", with_best=False)
    doc.append("\n## Makespan / plain bound (chess2)\n\nThe old yardstick, total work / total speed from time zero, "
               "for comparison with the honest one; median / worst.\n")
    head = ["scenario", "N"] + LABELS
    doc.append("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for key in [k for k in scenario_keys(rows) if k[0] == "chess2"]:
        for n in sizes(rows, key):
            doc.append(f"| {' '.join(key[1:])} | {n} | " + " | ".join(
                cell(plain.get(key + (n,), {}).get(c)) for c in LABELS) + " |")
    doc.append("\n## Blocks and reassignments (chess2, median over seeds)\n")
    head = ["scenario", "N"] + LABELS
    doc.append("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for key in [k for k in scenario_keys(rows) if k[0] == "chess2"]:
        for n in sizes(rows, key):
            cells = []
            for lab in LABELS:
                rs = [r for r in rows if (r["map"], r["cluster"], r["network"], int(r["workers"]), r["policy"])
                      == key + (n, lab) and r.get("blocks") is not None]
                cells.append(f"{statistics.median(r['blocks'] for r in rs):.0f} / "
                             f"{statistics.median(r['reassignments'] for r in rs):.0f}" if rs else "")
            doc.append(f"| {' '.join(key[1:])} | {n} | " + " | ".join(cells) + " |")
    doc.append("\n## Simulator wall time\n\nSeconds per `farm sim` process (all maps and scenarios), median / max.\n")
    head = ["N", "sims"] + LABELS
    doc.append("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for n in sorted({int(r["workers"]) for r in rows}):
        cells = []
        for lab in LABELS:
            t = [r["process_seconds"] for r in rows if int(r["workers"]) == n and r["policy"] == lab]
            cells.append(f"{statistics.median(t):.1f} / {max(t):.1f}" if t else "")
        cnt = sum(1 for r in rows if int(r["workers"]) == n)
        doc.append(f"| {n} | {cnt} | " + " | ".join(cells) + " |")
    doc.append("\n## What the data shows\n\nComputed from the runs above (medians over seeds):\n")
    doc.append(findings(rows, summary))
    doc.append("\n" + "\n".join(f"![{m}](plots/scale_{m}.png)" for m in sorted({r['map'] for r in rows}))
               + "\n![simulator time](plots/scale_simtime.png)\n")
    with open(path, "w") as f:
        f.write("\n".join(doc))


def plot(rows, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    summary = g.summarise(rows)
    colors = dict(zip(ADAPTIVE, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]))
    for name in sorted({r["map"] for r in rows}):
        fig, axes = plt.subplots(len(g.CLUSTERS), len(g.NETWORKS), figsize=(11, 8), sharex=True, sharey=True)
        for i, cl in enumerate(g.CLUSTERS):
            for j, net in enumerate(g.NETWORKS):
                ax, key = axes[i][j], (name, cl, net)
                ns = sizes(rows, key)
                for lab in [p.label for p in g.POLICIES if p.fixed]:
                    pts = [(n, summary[key + (n,)][lab]["median"]) for n in ns if summary[key + (n,)].get(lab)
                           and summary[key + (n,)][lab]["median"]]
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], color="0.7", lw=0.8, ls=":")
                    if pts and pts[-1][1] < YMAX:
                        ax.annotate(lab.split("-")[1], pts[-1], xytext=(3, 0), textcoords="offset points",
                                    fontsize=7, color="0.5", va="center")
                for lab in [g.BEST_FIXED] + ADAPTIVE:
                    pts = [(n, summary[key + (n,)][lab]) for n in ns if summary[key + (n,)].get(lab)
                           and summary[key + (n,)][lab]["median"]]
                    if not pts:
                        continue
                    x, med = [p[0] for p in pts], [p[1]["median"] for p in pts]
                    up = [max(0.0, (p[1]["worst"] or p[1]["median"]) - p[1]["median"]) for p in pts]
                    ax.errorbar(x, med, yerr=[[0] * len(up), up], marker="o", ms=4, capsize=3,
                                color=colors.get(lab, "black"), ls="--" if lab == g.BEST_FIXED else "-",
                                label=lab if lab != g.BEST_FIXED else "best fixed S0 (grey: each fixed S0, clipped)")
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_ylim(0.9, YMAX)
                ax.set_yticks(YTICKS)
                ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
                ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
                ax.axhline(1.0, color="black", lw=0.6)
                ax.set_title(f"{name}: {cl} speeds, {net}")
                ax.grid(True, which="both", alpha=0.3)
                if i == len(g.CLUSTERS) - 1:
                    ax.set_xlabel("workers N (weak scaling)")
                if j == 0:
                    ax.set_ylabel("makespan / honest bound")
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"Scale study, {name} cost map: median over seeds, bar up to the worst")
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"scale_{name}.png"), dpi=110)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, lab in enumerate(LABELS):
        ns = sorted({int(r["workers"]) for r in rows if r["policy"] == lab})
        t = [max(r["process_seconds"] for r in rows if r["policy"] == lab and int(r["workers"]) == n) for n in ns]
        ax.plot(ns, t, marker="o", label=lab, color=plt.cm.tab10(k % 10))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("workers N")
    ax.set_ylabel("farm sim wall time, slowest scenario (s)")
    ax.set_title("Simulator cost per run")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "scale_simtime.png"), dpi=110)
    plt.close(fig)
