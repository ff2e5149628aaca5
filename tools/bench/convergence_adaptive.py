"""The --adaptive run of tools/bench/convergence.py for one scene (issue 41 item 5): each renderer's
fixed-spp series and its adaptive series (ours: --noise-threshold; Cycles: adaptive sampling on,
adaptive_threshold, automatic min samples) at one maximum spp, each image's RMSE against its own
renderer's high-spp fixed reference, the equal-quality times, and where the adaptive renders
stopped their pixels. Imported by convergence.py.

Order of the renders: the fixed series, then the adaptive series (both alternating between the
renderers and keeping the fastest of the repeats), then the references, then the untimed
sample-count renders.
"""
import os

from bench import convergence_compare
from bench import convergence_samples as samples
from bench.convergence_equal_quality import choose_targets, equal_quality
from bench.convergence_figures import adaptive_plot, sample_count_maps
from bench.convergence_metrics import analyse, image_error
from bench.convergence_render import REF_SEEDS, TEST_SEED, render_pair, start_scene


def run_scene_adaptive(case, args):
    name, work, log, scene = start_scene(case, args)
    renders, adaptive = {}, []
    M = args.max_spp

    def show(tag, r):
        if args.reanalyze:
            return
        parts = []
        for who in ("ours", "cycles"):
            if who in r:
                pt = r[who].get("pt_seconds")
                parts.append(f"{'ours' if who == 'ours' else 'Cycles'} {r[who]['seconds']:.3f} s"
                             + (f" (path tracing {pt:.3f} s)" if pt else ""))
        print(f"  {tag:>22}: " + ", ".join(parts), flush=True)

    for s in args.spp:
        renders[("test", s)] = render_pair(case, scene, s, TEST_SEED, f"{s}spp", args, work, log, args.repeat,
                                           reuse=("cycles",) if args.reuse_cycles else ())
        show(f"{s}spp", renders[("test", s)])
    same_fixed = same_as_reused([renders[("test", s)]["ours"]["exr"] for s in args.spp], args)
    to, tc = args.thresholds_ours, args.thresholds_cycles
    for i in range(max(len(to), len(tc))):
        whos = tuple(w for w, lst in (("ours", to), ("cycles", tc)) if i < len(lst))
        tags = {"ours": f"nt{to[i]:g}_max{M}" if i < len(to) else None,
                "cycles": f"at{tc[i]:g}_max{M}" if i < len(tc) else None}
        extra = {"ours": ["--noise-threshold", f"{to[i]:g}"] if i < len(to) else [],
                 "cycles": ["--adaptive-threshold", f"{tc[i]:g}"] if i < len(tc) else []}
        r = render_pair(case, scene, M, TEST_SEED, tags, args, work, log, args.repeat, extra, whos,
                        reuse=("cycles",) if args.reuse_cycles else ())
        for who, lst in (("ours", to), ("cycles", tc)):
            if who in r:
                r[who]["threshold"] = lst[i]
        adaptive.append(r)
        show(" / ".join(f"{w} t={r[w]['threshold']:g}" for w in whos), r)
    # Cycles did not change: its images rendered again should be that run's (its reused sample
    # counts and references then belong to them).
    same_cycles = None if args.reuse_cycles else same_as_reused(
        [renders[("test", s)]["cycles"]["exr"] for s in args.spp] + [r["cycles"]["exr"] for r in adaptive
                                                                    if "cycles" in r], args)
    half = args.ref_spp // 2
    for k, seed in zip(("half1", "half2"), REF_SEEDS):
        renders[k] = render_pair(case, scene, half, seed, f"ref{half}_seed{seed}", args, work, log, 1,
                                 reuse=("ours", "cycles"))
        show(f"ref{half}_seed{seed}", renders[k])
    refs, fixed_rows, cross, fits = analyse(case, renders, args.spp)

    rows = []
    for r in fixed_rows:
        rows.append({"series": "fixed", "ours": dict(r["ours"], label=f"{r['spp']}"),
                     "cycles": dict(r["cycles"], label=f"{r['spp']}")})
    for r in adaptive:
        row = {"series": "adaptive"}
        for who in ("ours", "cycles"):
            if who in r:
                row[who] = dict(image_error(r[who], refs[who]), label=f"t{r[who]['threshold']:g}")
        rows.append(row)

    # Samples per pixel of every adaptive render (untimed, after all the timed renders).
    counts_info, maps = {}, []
    if args.sample_counts:
        halves = {who: [renders[k][who]["exr"] for k in ("half1", "half2")] for who in ("ours", "cycles")}
        prefixes, impure = samples.render_ours_prefixes(case, scene, M, TEST_SEED, args, work, log)
        counts_info["ours_impure_prefixes"] = impure
        for row in rows:
            if row["series"] != "adaptive":
                continue
            for who in ("ours", "cycles"):
                r = row.get(who)
                if r is None:
                    continue
                if who == "ours":
                    c, same = samples.ours_counts(r["exr"], prefixes, M, r["threshold"]), None
                else:
                    c, same = samples.render_cycles_counts(case, scene, M, TEST_SEED, r["threshold"], args, work,
                                                           log, r["exr"])
                r["counts"] = samples.count_stats(c, M)
                r["counts"]["same_image"] = same
                if who == "ours":
                    r["counts"]["camera_rays"] = samples.camera_rays_check(r["exr"], c)
                r["error_by_count"] = samples.error_by_count(r["exr"], c, halves[who])
                maps.append((f"{'ours' if who == 'ours' else 'Cycles'} t={r['threshold']:g}", c))
        maps.sort(key=lambda m: (not m[0].startswith("ours"), -float(m[0].split("t=")[1])))
    targets = args.targets or choose_targets(rows, args.target_count)
    prev = None
    if getattr(args, "compare_rev", None):
        if getattr(args, "previous", None) is None:
            args.previous = convergence_compare.load(args.compare_rev, args.compare_csv)
        prev = args.previous.get(name)
        if prev and not args.targets:
            # The earlier run's own targets too, so that its printed ratios reappear beside the new ones.
            targets = sorted(set(targets) | set(prev["targets"]), reverse=True)
    table = equal_quality(rows, targets)
    compare = convergence_compare.compare(prev, targets)
    plot = os.path.join(args.out_dir, f"{name}_adaptive_rmse_vs_time.png")
    adaptive_plot(name, rows, targets, plot)
    maps_png = None
    if maps:
        maps_png = os.path.join(args.out_dir, f"{name}_samples_per_pixel.png")
        sample_count_maps(name, maps, maps_png)
    commands = []
    for key in [("test", s) for s in args.spp]:
        commands += [renders[key]["ours"]["cmd"], renders[key]["cycles"]["cmd"]]
    for r in adaptive:
        commands += [r[w]["cmd"] for w in ("ours", "cycles") if w in r]
    for key in ("half1", "half2"):
        commands += [renders[key]["ours"]["cmd"], renders[key]["cycles"]["cmd"]]
    return {"name": name, "case": case, "refs": refs, "rows": rows, "cross": cross, "fits": fits,
            "targets": targets, "table": table, "plot": plot, "maps": maps_png, "counts_info": counts_info,
            "commands": commands, "ref_spp": args.ref_spp, "max_spp": M, "same_fixed": same_fixed,
            "same_cycles": same_cycles, "compare": compare,
            "compare_rev": getattr(args, "compare_rev", None) if prev else None,
            "compare_ours_adaptive": convergence_compare.ours_adaptive(prev)}


def same_as_reused(paths, args):
    """With --reuse-from: how this run's images compare with the same files of the earlier run:
    "identical" (bit for bit), "rounding" (no value more than 1e-6 apart, relatively: Cycles on
    several threads is not bit-exact from one render to the next) or "differs" (then that run's
    references, made the same way, may not stand for this one). None without --reuse-from or
    without paths."""
    if not getattr(args, "reuse_from", None) or not paths:
        return None
    import numpy as np
    from compare import compare_images  # read_rgb
    worst = "identical"
    for p in paths:
        old = os.path.join(args.reuse_from, os.path.basename(p))
        if not os.path.exists(old):
            kind = "differs"
        else:
            a, b = compare_images.read_rgb(p), compare_images.read_rgb(old)
            if a.shape != b.shape:
                kind = "differs"
            elif np.array_equal(a, b):
                kind = "identical"
            else:
                rel = float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-3)))
                kind = "rounding" if rel <= 1e-6 else "differs"
        if kind == "differs" and not args.reanalyze:
            print(f"  note: {os.path.basename(p)} differs from {old}: the references of that run may not stand",
                  flush=True)
        worst = max(worst, kind, key=("identical", "rounding", "differs").index)
    return worst
