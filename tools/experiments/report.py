"""Writes REPORT.md from the sweep CSV: setup, every table and plot, and the answers to the
experiment issue's questions computed from the data. A hand-written interpretation of the
committed full run (report_notes.md beside this file) is appended to full-run reports only.
"""
import datetime
import os
import platform
import statistics

from experiments import backends_stage, real_scenes
from experiments.report_tables import f, table
from farmtools.networks import describe as describe_network, one_way_delay_ms as network_delay_ms
from farmtools.sweep_data import best_config, group, median, read_rows, select, spread

HERE = os.path.dirname(os.path.abspath(__file__))

NOTES = os.path.join(HERE, "report_notes.md")

# The paper's figures (../shared/seeds/004_*.txt), cited for comparison.
PAPER_TABLE1_MS = {1: 0.092, 2: 0.105, 4: 0.139, 8: 0.313, 16: 0.684, 32: 2.035, 64: 7.633, 128: 30.605, 256: 122.753}
PAPER_FIG13 = [13.2, 14.0, 7.3, 4.9, 2.2]


def res_key(r):
    return int(r["width"]) * int(r["height"])


def simulator_sections(results_dir):
    """The simulator's result pages (tools/sim/*.py), each demoted one heading level."""
    out = ["## Simulator and run-time prediction\n\n`farm sim` drives the real scheduler in virtual time "
           "(docs/cli.md: `farm sim`, `farm plan`); these pages come from tools/sim/*.py and "
           "tools/bench/cost_map_scaling.py.\n"]
    for name, folder in (("validation.md", "sim"), ("plan_check.md", "sim"), ("scale_study.md", "sim"),
                         ("cost_map_scaling.md", "")):
        part = os.path.join(results_dir, folder, name)
        if not os.path.exists(part):
            continue
        text = open(part).read()
        if folder:
            text = text.replace("](plots/", f"]({folder}/plots/")
        lines = ["#" * (2 if line.startswith("# ") else 1) + line if line.startswith("#") else line
                 for line in text.splitlines()]
        out.append("\n".join(lines) + "\n")
    return out if len(out) > 1 else []


def reliability_sections(results_dir):
    """Issue 6's figures: fuzzing, chaos runs and the journal's cost, each demoted one level."""
    out = ["## Reliability: fuzzing, chaos and the journal\n\nThe farm's promises under crashes, faults, hostile "
           "peers and bad files (docs/cli.md: \"Crashes and --resume\", Security; docs/failures.md: \"When things "
           "go wrong\"); these pages come from tools/fuzz.sh, tools/chaos.py and tools/bench/journal_cost.py.\n"]
    for name in ("fuzz.md", "chaos.md", "bench_journal.md"):
        part = os.path.join(results_dir, name)
        if not os.path.exists(part):
            continue
        lines = ["#" * (2 if line.startswith("# ") else 1) + line if line.startswith("#") else line
                 for line in open(part).read().splitlines()]
        out.append("\n".join(lines) + "\n")
    return out if len(out) > 1 else []


def factoring_section(rows):
    """The factoring policy (no block size to choose) against every fixed block size, per
    resolution and cluster; medians of interleaved repetitions."""
    if not rows:
        return []
    out = ["## Factoring against fixed block sizes (no block size to choose)\n",
           "chess2, each resolution of the Figure 13 experiment, on paper6, on hetero4 (four loopback workers of "
           "speeds 2, 1, 0.5, 0.25) and on homo4 (four loopback workers of speed 1). `factoring` sizes every block from the work left, the asking worker's measured "
           "speed and a preview's cost map (docs/cli.md, `--policy factoring`); fixed sizes are the alternatives a "
           "user would otherwise choose between. Repetitions were interleaved (every configuration once, then again). "
           "Best fixed = the fixed size with the lowest median window at that resolution and cluster, chosen after "
           "the fact. Honest bound = each worker counted from its first lease, and never below the densest block's "
           "cost per pixel times a 4x4 block (farmtools/bounds.py).\n"]
    trows = []
    for cluster in sorted({r["cluster"] for r in rows}):
        at_c = [r for r in rows if r["cluster"] == cluster]
        for res in sorted({(int(r["width"]), int(r["height"])) for r in at_c}, key=lambda x: x[0] * x[1]):
            at = [r for r in at_c if (int(r["width"]), int(r["height"])) == res]
            fixed = [r for r in at if r["policy"] == "fixed"]
            fac = [r for r in at if r["policy"] == "factoring"]
            if not fixed or not fac:
                continue
            (fb,), fr, _ = best_config(fixed, ("block",))
            fw, aw = median(fr, "window_s"), median(fac, "window_s")
            sizes = sorted({int(r["block"]) for r in fixed})
            per = [f(median([r for r in fixed if int(r["block"]) == b], "window_s")) for b in sizes]
            _, lo, hi = spread(fac, "window_s")
            bound = median(fac, "honest_bound_s") if any(r.get("honest_bound_s") for r in fac) else None
            # Whole commands too: factoring's preview runs before the window opens, while the
            # workers start, so the window alone would leave out a cost only factoring has (and
            # the start-up stagger the fixed runs' windows include).
            fm = min(median([r for r in fixed if int(r["block"]) == b], "makespan_s") for b in sizes)
            am = median(fac, "makespan_s")
            trows.append([cluster, f"{res[0]}x{res[1]}", len(fac)] + per +
                         [f"{f(fw)} (S={fb})", f"{f(aw)} ({f(lo)}..{f(hi)})",
                          f"{(fw / aw - 1) * 100:+.1f}%" if aw else "", f(fm), f(am),
                          f"{(fm / am - 1) * 100:+.1f}%" if am else "", f(median(fac, "blocks"), 0),
                          f(bound), f(aw / bound) if bound and aw else ""])
    sizes = sorted({int(r["block"]) for r in rows if r["policy"] == "fixed"})
    out.append(table(["cluster", "resolution", "reps"] + [f"fixed {b} (s)" for b in sizes] +
                     ["best fixed (s)", "factoring (s), range", "factoring vs best",
                      "best fixed, whole command (s)", "factoring, whole command (s)", "vs best, whole command",
                      "factoring blocks", "honest bound (s)", "factoring / bound"], trows))
    out.append("\nWindows: first assignment to last accepted block (the paper's measure). Whole command: the "
               "master's wall clock from start to image written, the best fixed size's chosen by this measure; "
               "factoring's includes its preview render. Gains are best / factoring - 1: positive when factoring "
               "is faster.\n")
    return out


def write(path, csv_path, plots_made, cfg, reference_cores, clusters, command, started, finished, quick=False, note="",
          backends_skipped=None):
    all_rows = read_rows(csv_path)
    rel = lambda p: os.path.relpath(p, os.path.dirname(os.path.abspath(path)))  # noqa: E731
    img = lambda name, alt: f"![{alt}]({rel(plots_made[name])})\n" if name in plots_made else f"*(plot {name} not made)*\n"  # noqa: E731
    farm_rows = [r for r in all_rows if r["mode"] == "farm"]
    L = []
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    L.append("# Experiments: block sizes, waiting times, heterogeneous CPUs and slow networks\n")
    if quick:
        L.append("**Smoke run (`--quick`)**: tiny images, one repetition; the figures below show that the pipeline "
                 "works, not how the farm performs. The committed full run is results/REPORT.md.\n")
    # The measurements' own time span (a re-run that only redraws the report keeps it).
    dates = sorted(datetime.datetime.strptime(r["date"], "%Y-%m-%d %H:%M:%S") for r in all_rows if r["date"])
    first, last = (dates[0], dates[-1]) if dates else (datetime.datetime.fromtimestamp(started),
                                                      datetime.datetime.fromtimestamp(finished))
    L.append(f"Command: `{command}`  \nMeasured: {first:%Y-%m-%d %H:%M} to {last:%H:%M} "
             f"({(last - first).total_seconds() / 60:.0f} min of runs)  \n"
             f"Machine: {os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}; master, workers and "
             f"proxies share these cores.  \nData: `{rel(csv_path)}` (one row per run; columns explained in "
             "tools/experiments/sweep.py)\n")
    if note:
        L.append(f"**Note:** {note}\n")

    # ------------------------------------------------------------------ setup
    L.append("## Setup\n")
    L.append(f"Every figure comes from real `farm master` + `farm worker` processes on this machine. A node of speed "
             f"1.0 is a worker capped at {reference_cores:g} of one core (cgroup CPU quota, `tools/cpu_quota`); a node "
             "of speed s gets s times that. Workers whose network is not loopback reach the master through their own "
             f"delaying TCP proxy (`tools/net/delay_proxy.py`; `lab` = {describe_network('lab')}, `dorm` = "
             f"{describe_network('dorm')}, `Nms` = N ms one way; the proxy adds about 1 ms per direction of its "
             "own, measured in results/net_proxy_check.md). Each worker renders with one thread and prefetches one "
             f"block. Images are rendered with {cfg['spp']} samples per pixel.\n")
    L.append("Times: **window** = from the master's first assignment to its last accepted block; **single** = `farm "
             "single`'s render time with one thread on a speed-1.0 node. Both leave out process start, parsing and "
             "loading, as the paper did (section 3.2). **Speedup** = single / window. **Lower bound** = total work / "
             "total measured worker speed (single / sum of speeds), never below the longest block moved to the "
             "fastest node; **efficiency** = lower bound / window. A second bound, *bound with joins*, counts each "
             "worker only from the moment it joined (a node capped at 0.09 cores also takes seconds to start).\n")
    cal = {r["speeds"]: float(r["window_s"]) for r in select(all_rows, experiment="calibration")}
    crow = []
    for name, c in clusters.items():
        nominal = c.speeds_text()
        measured = " ".join(f"{cal['1'] / cal[s]:.2f}" if s in cal and "1" in cal else "?" for s in nominal.split())
        crow.append([name, len(c.nodes), nominal, measured, c.network_text(),
                     f"{sum(n.speed for n in c.nodes) * reference_cores:.2f}"])
    L.append("Clusters (speeds measured by `farm single` on chess2 160x120 under each quota, two runs each):\n")
    L.append(table(["cluster", "workers", "nominal speeds", "measured speeds", "network", "CPU cores used"], crow))
    spreads = []
    for rs in group(farm_rows, ("experiment", "scene", "width", "policy", "block", "wait", "cluster",
                                 "network")).values():
        if len(rs) >= 2:
            _, lo, hi = spread(rs, "window_s")
            spreads.append((hi - lo) / median(rs, "window_s") * 100)
    noise = statistics.median(spreads) if spreads else None
    ident = [r for r in farm_rows if r["identical"] != "" and real_scenes.exact(r["scene"])]
    same = sum(1 for r in ident if r["identical"] == "1")
    not_exact = sorted({r["scene"] for r in farm_rows if not real_scenes.exact(r["scene"])})
    L.append(f"\n**Byte identity:** {same} of {len(ident)} farm runs wrote an image byte-identical to `farm single`'s "
             "for the same scene and settings (every block size, policy, cluster and network above"
             + (f"; not counted: {', '.join(not_exact)}, which cannot be exact, below" if not_exact else "") + ").\n")

    # ------------------------------------------------------------------ Table 1
    rtt = select(all_rows, experiment="rtt")
    if rtt:
        L.append("## Round trip against block size (the paper's Table 1)\n")
        L.append("One worker at full speed with a null renderer (no rendering, uncompressed 8-bit pixels), one thread, "
                 "no prefetch, fixed square blocks: every block is one request, assignment and result exchange. "
                 "Microseconds per block, median of the repetitions. The paper's column is its switch latency for the "
                 "same payload (PVM over 100 Mbit/s Ethernet, 2004).\n")
        nets = sorted({r["network"] for r in rtt}, key=network_delay_ms)
        blocks = sorted({int(r["block"]) for r in rtt})
        rows = []
        for b in blocks:
            row = [b, 3 * b * b]
            for n in nets:
                row.append(f(median(select(all_rows, experiment="rtt", block=b, network=n), "rtt_us"), 0))
            row.append(PAPER_TABLE1_MS.get(b, "") and f"{PAPER_TABLE1_MS[b] * 1000:.0f}")
            rows.append(row)
        L.append(table(["block", "pixel bytes"] + [f"{n} (us)" for n in nets] + ["paper, lab switch (us)"], rows))
        L.append(img("rtt_vs_block", "round trip against block size"))

    # ------------------------------------------------------------------ wait search
    ws = select(all_rows, experiment="waitsearch")
    best_wait = None
    if ws:
        L.append("## Waiting-time search (section 4.2)\n")
        L.append("The paper's procedure, automated (tools/experiments/waitsearch.py): raise the waiting time step by "
                 "step and keep the one with the shortest run; stop after steps without improvement. chess2, paper6 "
                 "cluster, `seed` policy (the paper's halving).\n")
        groups = group(ws, ("wait",))
        rows = []
        for (w,), rs in sorted(groups.items(), key=lambda kv: float(kv[0][0])):
            _, lo, hi = spread(rs, "window_s")
            rows.append([w, f(median(rs, "window_s")), f"{f(lo)}..{f(hi)}", f(median(rs, "halvings"), 0)])
        best_wait = min(groups, key=lambda k: median(groups[k], "window_s"))[0]
        L.append(table(["wait (s)", "median window (s)", "range", "median halvings"], rows))
        L.append(f"\nPicked: **{best_wait} s**; the later experiments use it for `seed` and `adaptive`.\n")
        hm = [r for r in select(all_rows, experiment="heatmap", policy="seed") if r["block"] == ws[0]["block"]]
        if hm:
            k, rs, _ = best_config(hm, ("wait",))
            L.append(f"The heatmap below, at the same block size ({ws[0]['block']}), is fastest at wait {k[0]} s "
                     f"(median {f(median(rs, 'window_s'))} s).\n")
        L.append(img("waitsearch", "wait search"))

    # ------------------------------------------------------------------ Figure 13
    rs_rows = select(all_rows, experiment="resolution")
    answers = []
    if rs_rows:
        L.append("## Adaptive halving against fixed block sizes per resolution (the paper's Figure 13)\n")
        L.append("chess2 on the paper6 cluster (a P4-like node, three P-III-like nodes on `lab`, a Duron-like and a "
                 "Celeron-like node on `dorm`). Best fixed = the fixed block size with the lowest median window at that "
                 "resolution (chosen after the fact, which favours fixed). Gain = best-fixed window / window - 1.\n")
        rows = []
        for res in sorted({(int(r["width"]), int(r["height"])) for r in rs_rows}, key=lambda x: x[0] * x[1]):
            at = [r for r in rs_rows if (int(r["width"]), int(r["height"])) == res]
            (fb,), fr, _ = best_config([r for r in at if r["policy"] == "fixed"], ("block",))
            fw = median(fr, "window_s")
            f32 = median([r for r in at if r["policy"] == "fixed" and r["block"] == "32"], "window_s")
            row = [f"{res[0]}x{res[1]}", f(median(at, "single_s")), f"{f(fw)} (S={fb})", f(f32)]
            for p in ("seed", "adaptive"):
                pr = [r for r in at if r["policy"] == p]
                pw = median(pr, "window_s")
                gain = (fw / pw - 1) * 100 if pw else None
                gain32 = (f32 / pw - 1) * 100 if pw and f32 else None
                row += [f(pw), f"{gain:+.1f}%" if gain is not None else "",
                        f"{gain32:+.1f}%" if gain32 is not None else "", f(median(pr, "halvings"), 0)]
                answers.append((p, res, gain, gain32))
            row += [f(median(at, "lower_bound_s")), f(median(at, "lower_bound_join_s"))]
            rows.append(row)
        L.append(table(["resolution", "single (s)", "best fixed (s)", "fixed 32 (s)", "seed (s)", "seed vs best",
                        "seed vs 32", "seed halvings", "adaptive (s)", "adaptive vs best", "adaptive vs 32",
                        "adaptive halvings", "lower bound (s)", "bound with joins (s)"], rows))
        L.append(f"\nThe paper reports +{', +'.join(f'{v:g}' for v in PAPER_FIG13)}% from low to high resolution "
                 "(8.3% on average), against its own fixed 32x32 default rather than the best fixed size.\n")
        L.append(img("adaptive_vs_fixed", "adaptive against fixed"))

    # ------------------------------------------------------------------ factoring (issue 15)
    L += factoring_section(select(all_rows, experiment="policies"))

    # ------------------------------------------------------------------ heatmap
    hm = select(all_rows, experiment="heatmap")
    if hm:
        L.append("## Block size x waiting time\n")
        for p in sorted({r["policy"] for r in hm}):
            pr = [r for r in hm if r["policy"] == p]
            blocks = sorted({int(r["block"]) for r in pr})
            waits = sorted({float(r["wait"]) for r in pr})
            rows = []
            for w in waits:
                rows.append([f"{w:g}"] + [f(median([r for r in pr if int(r["block"]) == b and float(r["wait"]) == w],
                                                  "window_s")) for b in blocks])
            (kb, kw), krs, _ = best_config(pr, ("block", "wait"))
            L.append(f"`{p}`, chess2 {pr[0]['width']}x{pr[0]['height']}, paper6: median window (s); rows = wait (s), "
                     f"columns = initial block size. Best: S0={kb}, wait {kw} s ({f(median(krs, 'window_s'))} s).\n")
            L.append(table(["wait \\ block"] + [str(b) for b in blocks], rows))
            L.append("")
        L.append(img("heatmap_block_wait", "heatmap"))

    # ------------------------------------------------------------------ scenes
    sc = select(all_rows, experiment="scenes")
    losses = []
    if sc:
        L.append("## Policies on the five scenes\n")
        L.append("paper6 cluster; median window (s) and, in brackets, the change against the best fixed size.\n")
        cfgs = sorted({(r["policy"], int(r["block"])) for r in sc}, key=lambda c: (c[0] != "fixed", c[0], c[1]))
        rows = []
        for scene in sorted({r["scene"] for r in sc}):
            at = [r for r in sc if r["scene"] == scene]
            _, fr, _ = best_config([r for r in at if r["policy"] == "fixed"], ("block",))
            fw = median(fr, "window_s")
            row = [scene, f(median(at, "single_s"))]
            for p, b in cfgs:
                pw = median([r for r in at if r["policy"] == p and int(r["block"]) == b], "window_s")
                gain = (fw / pw - 1) * 100 if pw else None
                row.append(f"{f(pw)} ({gain:+.1f}%)" if gain is not None else "")
                if p != "fixed" and gain is not None and gain < 0:
                    losses.append((scene, p, gain))
            rows.append(row)
        L.append(table(["scene", "single (s)"] + [f"{p} {b}" for p, b in cfgs], rows))
        L.append(img("scene_policies", "policies per scene"))

    # ------------------------------------------------------------------ Figure 11
    su = select(all_rows, experiment="speedup")
    if su:
        L.append("## Speedup on homogeneous nodes (the paper's Figure 11)\n")
        L.append("1 to 4 speed-1.0 nodes on loopback, fixed blocks, against `farm single` on one such node.\n")
        ns = sorted({int(r["workers"]) for r in su})
        rows = []
        for scene in sorted({r["scene"] for r in su}):
            at = [r for r in su if r["scene"] == scene]
            row = [scene, f(median(at, "single_s"))]
            for n in ns:
                nr = [r for r in at if int(r["workers"]) == n]
                row.append(f"{f(median(nr, 'speedup'))} (eff {f(median(nr, 'efficiency'))})")
            rows.append(row)
        L.append(table(["scene", "single (s)"] + [f"{n} node(s)" for n in ns], rows))
        L.append("\nThe paper measured near-linear speedup on 2-4 nodes and quotes Amdahl's law with 1% serial work "
                 "(3 nodes: 2.941).\n")
        L.append(img("speedup_vs_workers", "speedup against workers"))

    # ------------------------------------------------------------------ latency
    la = select(all_rows, experiment="latency")
    best_by_net = {}
    if la:
        L.append("## Best block size against network latency\n")
        nets = sorted({r["network"] for r in la}, key=network_delay_ms)
        blocks = sorted({int(r["block"]) for r in la})
        rows = []
        for b in blocks:
            rows.append([b] + [f(median([r for r in la if r["network"] == n and int(r["block"]) == b], "window_s"))
                               for n in nets])
        for n in nets:
            (kb,), _, _ = best_config([r for r in la if r["network"] == n], ("block",))
            best_by_net[n] = kb
        rows.append(["**best**"] + [f"**{best_by_net[n]}**" for n in nets])
        L.append(f"chess2 {la[0]['width']}x{la[0]['height']} on the {la[0]['cluster']} cluster (speeds "
                 f"{la[0]['speeds']}), fixed blocks, every worker behind the given link; median window (s).\n")
        L.append(table(["block"] + [f"{n}" for n in nets], rows))
        L.append(img("latency_best_block", "best block against latency"))

    # ------------------------------------------------------------------ gantt
    gantt_plots = [k for k in plots_made if k.startswith("gantt")]
    if gantt_plots:
        L.append("## Space-time charts\n")
        L.append("One run per policy (chess2, paper6): each worker's blocks over time, coloured by block size, the "
                 "view the paper's authors had from XPVM.\n")
        for k in sorted(gantt_plots):
            L.append(img(k, k))

    L += backends_stage.section(all_rows, backends_skipped)

    # ------------------------------------------------------------------ answers
    L.append("## Answers from this run's data\n")
    if noise is not None:
        L.append(f"- **Noise first:** the same configuration run twice differs by {noise:.0f}% (median of "
                 "(max - min) / median over every repeated configuration), so differences smaller than that are not "
                 "findings.")
    for p in ("seed", "adaptive"):
        g = [(res, gain, g32) for q, res, gain, g32 in answers if q == p and gain is not None]
        if g:
            L.append(f"- **Does `{p}` beat the best fixed block size on the heterogeneous cluster?** "
                     + ", ".join(f"{w}x{h}: {gain:+.1f}%" for (w, h), gain, _ in g)
                     + f" (mean {statistics.mean(x for _, x, _ in g):+.1f}%); against fixed 32x32 (the paper's "
                     "comparison): " + ", ".join(f"{g32:+.1f}%" for _, _, g32 in g if g32 is not None) + ".")
    if sc:
        L.append("- **When does halving lose?** " + ("; ".join(f"{s} with {p} ({g:+.1f}%)" for s, p, g in losses)
                                                   if losses else "in no scene of this run.")
                 + " (negative = slower than the best fixed size).")
    if best_by_net:
        L.append("- **How does the best block size move with latency?** "
                 + ", ".join(f"{n}: {b}" for n, b in best_by_net.items()) + ".")
    pol = {}
    for r in farm_rows:
        if r["experiment"] in ("resolution", "scenes", "heatmap") and r["efficiency"]:
            pol.setdefault(r["policy"], []).append(float(r["efficiency"]))
    if pol:
        L.append("- **How close is each policy to the lower bound?** Median efficiency (bound / window) over the "
                 "resolution, scene and heatmap runs: " + ", ".join(f"`{p}` {statistics.median(v):.2f} ({len(v)} runs)"
                                                                   for p, v in sorted(pol.items())) + ".")
    L.append("")
    if not quick and os.path.exists(NOTES):
        L.append(open(NOTES).read())
    if not quick:
        L += simulator_sections(os.path.dirname(os.path.abspath(path)))
        L += reliability_sections(os.path.dirname(os.path.abspath(path)))
    with open(path, "w") as fh:
        fh.write("\n".join(L) + "\n")
