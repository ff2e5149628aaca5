"""The paper's experiments again with real renderers behind the farm's backends (real_scenes.py):
Debian's chess2.pov and desk.pov under POV-Ray 3.7, beside the TOML look-alikes of the other
stages, and a Cycles scene under Blender. Every POV-Ray block is a `povray` process, so a block's
start-up is real, not emulated; a Blender worker keeps one Blender per render thread.

  Table 1    what a block costs beyond its pixels, by block size (one worker on one core);
  Figure 13  seed and adaptive halving, factoring and fixed sizes per resolution, paper6 cluster;
  Figure 11  speedup on 1-4 homogeneous nodes, both POV-Ray scenes;
  policies   fixed sizes, seed and factoring on paper6 and hetero4, POV-Ray and Blender.
"""

from experiments import real_scenes
from experiments.report_tables import f, table
from farmtools.sweep_data import best_config, median, select

EXPERIMENTS = ("pov_blockcost", "pov_resolution", "pov_speedup", "backend_policies")


def scenes_of(cfg):
    names = {cfg["blockcost"]["scene"], cfg["resolution"]["scene"]}
    names |= {scene for scene, _ in cfg["speedup"]["scenes"]}
    names |= {scene for scene, _, _, _ in cfg["policies"]["runs"]}
    return sorted(names)


def run(sweep, cfg, wait, s0, factoring_block, log):
    """Runs the stage's points (resumable, as every stage); skipped, saying why, without a renderer."""
    why = real_scenes.missing(scenes_of(cfg))
    if why:
        log(f"  skipped: {why}")
        return why
    reps = cfg.get("reps", 1)
    bc = cfg["blockcost"]
    for rep in range(reps):
        for b in bc["blocks"]:
            sweep.block_cost_point("pov_blockcost", bc["scene"], *bc["res"], b, rep)
    rc = cfg["resolution"]
    for rep in range(reps):
        for (w, h) in rc["res"]:
            for b in rc["fixed"]:
                sweep.point("pov_resolution", rc["scene"], w, h, 0, "fixed", b, wait, "paper6", "cluster", rep)
            for policy in ("seed", "adaptive"):
                sweep.point("pov_resolution", rc["scene"], w, h, 0, policy, s0, wait, "paper6", "cluster", rep)
            sweep.point("pov_resolution", rc["scene"], w, h, 0, "factoring", factoring_block, wait, "paper6",
                        "cluster", rep)
    su = cfg["speedup"]
    for rep in range(reps):
        for scene, (w, h) in su["scenes"]:
            for c in su["clusters"]:
                sweep.point("pov_speedup", scene, w, h, 0, "fixed", su["block"], wait, c, "loopback", rep)
    pc = cfg["policies"]
    for rep in range(reps):
        for scene, (w, h), spp, clusters in pc["runs"]:
            for c in clusters:
                for b in pc["fixed"]:
                    sweep.point("backend_policies", scene, w, h, spp, "fixed", b, wait, c, "cluster", rep)
                sweep.point("backend_policies", scene, w, h, spp, "seed", s0, wait, c, "cluster", rep)
                sweep.point("backend_policies", scene, w, h, spp, "factoring", factoring_block, wait, c, "cluster", rep)
    return None


def policy_cells(at, fixed_sizes, others):
    """One configuration's cells: median window per fixed size, then per policy with its gain over
    the best fixed size (chosen after the fact) and its blocks, then the lower bound."""
    fixed = [r for r in at if r["policy"] == "fixed"]
    _, best, _ = best_config(fixed, ("block",))
    fw = median(best, "window_s")
    cells = []
    for b in fixed_sizes:
        br = [r for r in fixed if int(r["block"]) == b]
        cells.append(f(median(br, "window_s")) if br else "")
    for p in others:
        pr = [r for r in at if r["policy"] == p]
        pw = median(pr, "window_s") if pr else None
        cells.append(f"{f(pw)} ({(fw / pw - 1) * 100:+.1f}%, {f(median(pr, 'blocks'), 0)} blocks)" if pw else "")
    cells.append(f(median(at, "lower_bound_s")))
    return cells


def policies_table(rows):
    """Every (scene, size, cluster) with fixed sizes and policies: median window and blocks."""
    trows = []
    fixed_sizes = sorted({int(r["block"]) for r in rows if r["policy"] == "fixed"})
    others = [p for p in ("seed", "adaptive", "factoring") if any(r["policy"] == p for r in rows)]
    for key in sorted({(r["scene"], res_key(r), r["cluster"], r["spp"]) for r in rows}):
        at = [r for r in rows if (r["scene"], res_key(r), r["cluster"], r["spp"]) == key]
        fixed = [r for r in at if r["policy"] == "fixed"]
        if not fixed:
            continue
        size = f"{key[1][0]}x{key[1][1]}" + (f", {key[3]} spp" if key[3] not in ("", "0") else "")
        trows.append([key[0], size, key[2], f(median(at, "single_s"))] + policy_cells(at, fixed_sizes, others))
    return table(["scene", "size", "cluster", "single (s)"] + [f"fixed {b}" for b in fixed_sizes] + others +
                 ["lower bound (s)"], trows)


def res_key(r):
    return (int(r["width"]), int(r["height"]))


def section(all_rows, skipped=None):
    """REPORT.md's section for this stage, from whatever rows the CSV has."""
    rows = [r for r in all_rows if r["experiment"] in EXPERIMENTS]
    if not rows and not skipped:
        return []
    used = sorted({r["scene"] for r in rows if real_scenes.is_real(r["scene"])})
    listed = ", ".join(f"`{n}` = `{real_scenes.describe(n)}`" for n in used)
    L = ["## The paper's scenes under POV-Ray 3.7, and Blender's Cycles\n",
         f"Real renderers behind the farm's backends ({listed or 'none measured'}). chess2.pov and desk.pov are "
         "Debian's povray-examples (desk.pov at its default clock); cube.blend is tools/blender/make_test_scene.py's "
         "scene. Every POV-Ray block is one `povray` process on POV-Ray's 32-pixel grid, a worker keeps 4 going per "
         "thread (docs/povray.md); a Blender worker keeps one Blender per thread, rendering border regions "
         "(docs/blender.md). Same clusters, quotas and measures as above; `farm single` is the renderer's own "
         "full-frame render with one thread.\n"]
    if skipped:
        L.append(f"*Not measured in this run: {skipped}.*\n")
    bc = select(all_rows, experiment="pov_blockcost")
    if bc:
        r0 = bc[0]
        L.append(f"### What a block costs (the paper's Table 1, with the renderer in it)\n\n"
                 f"{r0['scene']} {r0['width']}x{r0['height']}, one worker on one whole core (quota 1.0), one thread, "
                 "fixed square blocks, against `farm single` on the same core. Per block: the worker's median "
                 "`povray` wall time for one block (start-up, parse, region); extra = (window - single) / blocks, "
                 "what each block adds to the run. The null-renderer table above is the network's share alone.\n")
        trows = []
        for b in sorted({int(r["block"]) for r in bc}):
            at = [r for r in bc if int(r["block"]) == b]
            window, single, blocks = median(at, "window_s"), median(at, "single_s"), median(at, "blocks")
            trows.append([b, f(blocks, 0), f(single), f(window), f(median(at, "rtt_us") / 1000, 0),
                          f((window - single) / blocks * 1000, 0), f(single / window)])
        L.append(table(["block", "blocks", "single (s)", "window (s)", "povray per block (ms)",
                        "extra per block (ms)", "single / window"], trows))
    rs = select(all_rows, experiment="pov_resolution")
    if rs:
        L.append("\n### Halving, factoring and fixed sizes per resolution (the paper's Figure 13)\n\n"
                 f"{rs[0]['scene']} on paper6. Median window (s); gain against the best fixed size (chosen after the fact). "
                 "Halving stops at 32, POV-Ray's grid.\n")
        fixed_sizes = sorted({int(r["block"]) for r in rs if r["policy"] == "fixed"})
        others = [p for p in ("seed", "adaptive", "factoring") if any(r["policy"] == p for r in rs)]
        trows = []
        for res in sorted({(int(r["width"]), int(r["height"])) for r in rs}, key=lambda x: x[0] * x[1]):
            at = [r for r in rs if (int(r["width"]), int(r["height"])) == res]
            fixed = [r for r in at if r["policy"] == "fixed"]
            if not fixed:
                continue
            trows.append([f"{res[0]}x{res[1]}", f(median(at, "single_s"))] + policy_cells(at, fixed_sizes, others))
        L.append(table(["resolution", "single (s)"] + [f"fixed {b}" for b in fixed_sizes] + others +
                       ["lower bound (s)"], trows))
    sp = select(all_rows, experiment="pov_speedup")
    if sp:
        L.append(f"\n### Speedup on homogeneous nodes (the paper's Figure 11)\n\n"
                 f"1 to 4 speed-1.0 nodes on loopback, fixed blocks of {sp[0]['block']}, against `farm single` on one "
                 "such node. Speedup (efficiency = lower bound / window).\n")
        ns = sorted({int(r["workers"]) for r in sp})
        trows = []
        for scene in sorted({(r["scene"], r["width"], r["height"]) for r in sp}):
            at = [r for r in sp if (r["scene"], r["width"], r["height"]) == scene]
            row = [f"{scene[0]} {scene[1]}x{scene[2]}", f(median(at, "single_s"))]
            for n in ns:
                nr = [r for r in at if int(r["workers"]) == n]
                row.append(f"{f(median(nr, 'speedup'))} (eff {f(median(nr, 'efficiency'))})" if nr else "")
            trows.append(row)
        L.append(table(["scene", "single (s)"] + [f"{n} node(s)" for n in ns], trows))
    pr = select(all_rows, experiment="backend_policies")
    if pr:
        # The Figure 13 runs at their largest size on paper6 are the same configurations.
        largest = max((res_key(r) for r in rs), key=lambda x: x[0] * x[1]) if rs else None
        same = [r for r in rs if res_key(r) == largest and r["policy"] != "adaptive"]
        L.append("\n### Policies on real renderers (paper6 and hetero4)\n\n"
                 "Fixed sizes, `seed` (halving from the stages' start block) and `factoring` on the paper6 and hetero4 clusters, where a "
                 "block's start-up is the renderer's own. Median window (s); gain against the best fixed size.\n")
        L.append(policies_table(pr + same))
    for exact in (True, False):
        at = [r for r in rows if r["mode"] == "farm" and r["identical"] != "" and real_scenes.exact(r["scene"]) == exact]
        if not at:
            continue
        same = sum(1 for r in at if r["identical"] == "1")
        names = ", ".join(sorted({r["scene"] for r in at}))
        if exact:
            L.append(f"\n**Byte identity:** {same} of {len(at)} farm runs of {names} wrote an image byte-identical to "
                     "`farm single`'s.\n")
        else:
            L.append(f"\n{names}: {same} of {len(at)} farm runs byte-identical to `farm single`'s, as expected of a "
                     "scene whose textures use `crand`, whose graininess follows render order (docs/povray.md).\n")
    return L
