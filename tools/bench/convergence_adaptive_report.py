"""The markdown report and CSVs of tools/bench/convergence.py --adaptive (equal-quality time against
Cycles with adaptive sampling on, issue 41 item 5). Imported by convergence.py.
"""
import csv
import math
import os
import shlex

from bench.convergence_equal_quality import SERIES
from bench.convergence_metrics import BIAS_FLAG
from bench.convergence_render import REF_SEEDS, TEST_SEED
from bench.convergence_report import fmt
from farmtools import ROOT

GOAL = 2.0   # issue 41: Cycles' time / ours at equal quality


def _path(p):
    r = os.path.relpath(p, ROOT)
    return p if r.startswith("..") else r


def _t(x):
    return fmt(x, ".3g") if x is not None else "n/a"


def _r(x, bold=False):
    if x is None:
        return "n/a"
    s = fmt(x, ".2f")
    return f"**{s}**" if bold else s


def _from(row, who, key):
    s = row["best_from"].get((who, key))
    return s or "n/a"


def markdown(results, skipped, failed, args, argv):
    md = ["# Equal-quality time: ours against Blender Cycles, adaptive sampling on both sides", "",
          "Made by `" + shlex.join(["/usr/bin/python3", "tools/bench/convergence.py"] + argv) + "` "
          f"(issue 41 item 5; scenes in `{os.path.relpath(args.cases, ROOT)}`).", "",
          f"- farm: `{_path(args.farm_source)}` (built {args.farm_mtime}, sha256 {args.farm_sha}; run as a copy in "
          f"the work folder, `{_path(args.farm)}`), "
          f"repository at commit {args.commit}"
          + (f"; uncommitted changes under renderer/ or farm/: {', '.join(args.dirty)}" if args.dirty else "") + ".",
          f"- Blender {args.blender_version}, Cycles on the CPU; both renderers on {args.threads_note}.",
          f"- Load average (1, 5, 15 min) at the start: {args.load_start}, at the end: {args.load_end}; "
          f"{os.cpu_count()} cores.",
          f"- Fixed series: {', '.join(map(str, args.spp))} spp. Adaptive series, at most {args.max_spp} spp per pixel: "
          f"ours `--noise-threshold` {', '.join(f'{t:g}' for t in args.thresholds_ours)} (automatic `--min-samples`); "
          f"Cycles `adaptive_threshold` {', '.join(f'{t:g}' for t in args.thresholds_cycles)} (adaptive_min_samples 0, "
          "automatic: 32 at 0.1, 64 at 0.01). Test images use seed "
          f"{TEST_SEED}; every one is rendered {args.repeat} time(s), alternating between the renderers, and the "
          f"fastest time kept. References: {args.ref_spp} spp fixed per renderer, two halves of {args.ref_spp // 2} "
          f"(seeds {REF_SEEDS[0]}, {REF_SEEDS[1]}), rendered once."] + reuse_note(results, args) + [""]
    if getattr(args, "intro", None) and os.path.exists(args.intro):
        with open(args.intro) as f:
            md += [f.read().rstrip(), ""]
    cmp_label = (getattr(args, "compare_label", None) or f"at {args.compare_rev}") \
        if getattr(args, "compare_rev", None) else None
    md += ["## How to read this", "",
          "- **RMSE**: linear radiance over all pixels and RGB channels against the renderer's OWN fixed-spp "
          "reference, with the reference's noise (estimated from its two halves) subtracted, as in "
          "`results/bench_convergence.md`.",
          "- **Times**: ours is the render phase of `farm single --stats`; Cycles' *render call* is the wall time "
          "of `bpy.ops.render.render` (scene sync, BVH, importance tables and path tracing), *PT* its path tracing "
          "alone (the stricter one for us).",
          "- **Equal-quality time** for a target RMSE: per renderer and series (fixed spp, adaptive), the "
          "measured (time, RMSE) points reduced to their Pareto front, interpolated linearly in log-log between "
          "the two points that bracket the target; no extrapolation (n/a outside the measured range). *Best* "
          "is the lowest of the fixed time, the adaptive time and the time on the front of both series' points "
          "together (which fills gaps; named \"fixed+adaptive\" when it lies between one point of each), and "
          "names which. **Ratio** = Cycles' time / "
          f"ours at the same RMSE: above 1 we are faster; the goal is >= {GOAL:g}.",
          "- Targets are round RMSE values inside the range every series of both renderers reaches (else the "
          "range both renderers' best curves reach), picked per scene unless `--targets` is given.",
          "- **Samples per pixel** of the adaptive renders: Cycles' from its Debug Sample Count pass (an extra, "
          "untimed render; its image is checked to be the timed one's), ours from bit-exact matches of each "
          "pixel against renders that stop every pixel at n samples (tools/bench/convergence_samples.py)."]
    if cmp_label:
        md.append(f"- **{cmp_label}**: the ratios of the report committed at {args.compare_rev} (its measured "
                  "points, `_points.csv`, interpolated at these targets; at that run's own targets, which are "
                  "included, they are the numbers it printed). That run timed both renderers at its own load.")
    md += ["", "## Summary: equal-quality time ratio Cycles / ours", "",
           "Best of fixed and adaptive on each side; in brackets Cycles' path-tracing time. Then fixed against "
           "fixed and adaptive against adaptive (path tracing)."
           + (f" Beside each ratio, in italics, the same ratio from the earlier run (*{cmp_label}*)." if cmp_label else ""), ""]
    cols = ["ratio, render call", "ratio, PT", "fixed/fixed PT", "adaptive/adaptive PT"]
    keys = [("seconds", "best"), ("pt_seconds", "best"), ("pt_seconds", "fixed"), ("pt_seconds", "adaptive")]
    head = []
    for c in cols:
        head += [c] + ([f"*{cmp_label}*"] if cmp_label else [])
    head = ["scene", "target RMSE"] + head + ["our best", "Cycles' best (PT)"]
    blank = "|" * (len(head) - 2)
    md += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for res in results:
        if not res["table"]:
            md.append(f"| {res['name']} | no common target {blank}")
        before = {r["target"]: r for r in (res.get("compare") or [])}
        for row in res["table"]:
            cells = [res["name"], f"{row['target']:g}"]
            for i, k in enumerate(keys):
                v = row["ratios"][k]
                cells.append(_r(v, i < 2 and v is not None and v >= GOAL))
                if cmp_label:
                    b = before.get(row["target"])
                    cells.append(f"*{_r(b['ratios'][k])}*" if b else "")
            cells += [_from(row, 'ours', 'seconds'), _from(row, 'cycles', 'pt_seconds')]
            md.append("| " + " | ".join(cells) + " |")
    for name, why in skipped:
        md.append(f"| {name} | skipped: {why} {blank}")
    for name, why in failed:
        md.append(f"| {name} | FAILED: {why} {blank}")
    md.append("")
    outdir = os.path.dirname(args.out_md)
    for res in results:
        md += scene_section(res, args, outdir)
    if args.notes and os.path.exists(args.notes):
        with open(args.notes) as f:
            md += [f.read().rstrip(), ""]
    return "\n".join(md)


def reuse_note(results, args):
    """The header's line on what --reuse-from took from an earlier run, and the checks that it may."""
    src = getattr(args, "reuse_from", None)
    if not src:
        return []
    import json
    info = {}
    try:
        with open(os.path.join(src, "run_info.json")) as f:
            info = json.load(f)
    except OSError:
        pass
    what = "both renderers' references and Cycles' untimed sample-count renders"
    if getattr(args, "reuse_cycles", False):
        what = "Cycles' test images with their times, " + what
    line = (f"- Not rendered again but taken from the run in `{src}`"
            + (f" (farm sha256 {info['farm_sha']}, repository at {info['commit']}, load {info['load_start']} at "
               f"its start, {info['load_end']} at its end)" if info.get("farm_sha") else "")
            + f": {what}.")

    def check(key, who):
        kinds = [r.get(key) for r in results]
        if not kinds or any(k is None for k in kinds):
            return ""
        if all(k == "identical" for k in kinds):
            return f"{who} are bit for bit that run's in every scene"
        bad = [r["name"] for r in results if r.get(key) == "differs"]
        if bad:
            return f"**{who} differ from that run's in {', '.join(bad)}**"
        near = [r["name"] for r in results if r.get(key) == "rounding"]
        return (f"{who} are that run's bit for bit except in {', '.join(near)}, where they differ by float "
                "rounding only (no value more than 1e-6 apart relatively, as between two repeats of one render)")
    checks = [c for c in (check("same_fixed", "our fixed-spp images of this run"),
                          check("same_cycles", "Cycles' test images rendered again")) if c]
    if checks:
        line += (" Checked: " + "; ".join(checks) + ". Where they are the same, that run's references and "
                 "Cycles' counts belong to this run's images.")
    return [line]


def ours_before_after(res, args):
    """With --compare-rev: our adaptive renders of the earlier run against this run's, per threshold."""
    prev = res.get("compare_ours_adaptive") or {}
    if not prev:
        return []
    label = getattr(args, "compare_label", None) or f"at {args.compare_rev}"
    md = ["", f"Our adaptive renders, {label} → this run (time s; RMSE; samples per pixel: mean, share of pixels "
              "at the fewest samples any pixel took (the first check, unless no pixel stopped there), "
              "at the maximum):", "",
          "| threshold | time | RMSE | samples/pixel mean | at the fewest | at max |", "|---|---|---|---|---|---|"]
    for row in res["rows"]:
        r = row.get("ours")
        if row["series"] != "adaptive" or r is None:
            continue
        b = prev.get(r["threshold"])
        if b is None:
            continue
        c, bc = r.get("counts") or {}, b.get("counts") or {}

        def pair(x, y, spec, scale=1.0, unit=""):
            f = lambda v: fmt(v * scale, spec) + unit if v is not None else "n/a"  # noqa: E731
            return f"{f(x)} → {f(y)}"
        md.append(f"| {r['threshold']:g} | {pair(b['seconds'], r['seconds'], '.3f')} | "
                  f"{pair(b['rmse'], r['rmse'], '.5f')} | {pair(bc.get('mean'), c.get('mean'), '.1f')} | "
                  f"{pair(bc.get('share_at_min'), c.get('share_at_min'), '.0f', 100, '%')} | "
                  f"{pair(bc.get('share_at_max'), c.get('share_at_max'), '.1f', 100, '%')} |")
    return md


def scene_section(res, args, outdir):
    case, cross = res["case"], res["cross"]
    links = f"[RMSE vs time]({os.path.relpath(res['plot'], outdir)})"
    if res["maps"]:
        links += f", [samples per pixel]({os.path.relpath(res['maps'], outdir)})"
    md = [f"## {res['name']}", "", " ".join(case.get("note", "").split()), "",
          f"{case['width']}x{case['height']}, our max_depth {case['max_depth']} (Cycles {case['max_depth'] - 1} "
          f"bounces), {case['threads']} threads. {links}.", "",
          f"![{res['name']} RMSE vs time]({os.path.relpath(res['plot'], outdir)})", "",
          "Equal-quality times (s) and ratios Cycles / ours:", "",
          "| target RMSE | ours best | ours fixed | ours adaptive | Cycles call best | Cycles PT best | "
          "Cycles PT fixed | Cycles PT adaptive | **ratio call** | **ratio PT** | adaptivity gain ours | "
          "adaptivity gain Cycles PT |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in res["table"]:
        t = row["times"]
        g = row["ratios"]
        md.append(f"| {row['target']:g} | {_t(t[('ours', 'seconds', 'best')])} ({_from(row, 'ours', 'seconds')}) | "
                  f"{_t(t[('ours', 'seconds', 'fixed')])} | {_t(t[('ours', 'seconds', 'adaptive')])} | "
                  f"{_t(t[('cycles', 'seconds', 'best')])} ({_from(row, 'cycles', 'seconds')}) | "
                  f"{_t(t[('cycles', 'pt_seconds', 'best')])} ({_from(row, 'cycles', 'pt_seconds')}) | "
                  f"{_t(t[('cycles', 'pt_seconds', 'fixed')])} | {_t(t[('cycles', 'pt_seconds', 'adaptive')])} | "
                  f"**{_r(g[('seconds', 'best')])}** | **{_r(g[('pt_seconds', 'best')])}** | "
                  f"{_r(g[('adaptive_gain', 'ours', 'seconds')])} | {_r(g[('adaptive_gain', 'cycles', 'pt_seconds')])} |")
    md += ["", "*Adaptivity gain*: the renderer's fixed-spp time / its adaptive time at that RMSE (> 1: its "
           "adaptive sampling helps).", "",
           "Measured points (samples per pixel: mean, and 10th / 50th / 90th percentile, share of pixels at the "
           "lowest count and at the maximum):", "",
           "| renderer | series | setting | time (s) | Cycles PT (s) | RMSE | raw RMSE | samples/pixel mean | "
           "p10 / p50 / p90 | at min | at max |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for who in ("ours", "cycles"):
        for row in res["rows"]:
            r = row.get(who)
            if r is None:
                continue
            if row["series"] == "fixed":
                setting, c = f"{r['spp']} spp", None
            else:
                setting, c = f"threshold {r['threshold']:g}, max {r['spp']}", r.get("counts")
            cc = (f"{c['mean']:.1f} | {c['p10']:.0f} / {c['p50']:.0f} / {c['p90']:.0f} | "
                  f"{100 * c['share_at_min']:.0f}% ({c['min']}) | {100 * c['share_at_max']:.1f}%") if c else \
                 (f"{r['spp']} | | | " if row["series"] == "fixed" else "n/a | | |")
            md.append(f"| {'ours' if who == 'ours' else 'Cycles'} | {row['series']} | {setting} | "
                      f"{r['seconds']:.3f} | {fmt(r.get('pt_seconds'), '.3f') if who == 'cycles' else ''} | "
                      f"{fmt(r['rmse'], '.5f')} | {fmt(r['rmse_raw'], '.5f')} | {cc} |")
    md += ours_before_after(res, args)
    ro, rc = res["refs"]["ours"], res["refs"]["cycles"]
    md += ["", f"References ({res['ref_spp']} spp): ours {ro['seconds']:.1f} s, noise RMSE {math.sqrt(ro['var']):.5f}; "
           f"Cycles {rc['seconds']:.1f} s, noise RMSE {math.sqrt(rc['var']):.5f}. Cross-check: mean luminance "
           f"ours/Cycles **{cross['lum_ratio']:.4f}**"
           + (f" **BIAS? more than {BIAS_FLAG:.0%} apart**" if cross["flag"] else "")
           + f"; RMSE between the references {cross['rmse']:.5f} against {cross['rmse_noise']:.5f} from their noise alone.",
           ""]
    ebc = [(who, row[who]) for who in ("ours", "cycles") for row in res["rows"]
           if row["series"] == "adaptive" and row.get(who) and row[who].get("error_by_count")]
    if ebc:
        bins = sorted({tuple(b["bin"]) for _, r in ebc for b in r["error_by_count"]})
        md += ["Where the error of each adaptive render is, by the samples its pixels took: share of pixels / "
               "share of the squared error (reference noise subtracted per pixel) / RMSE of those pixels.", "",
               "| renderer, threshold | " + " | ".join(f"{lo + 1}-{hi} spp" for lo, hi in bins) + " |",
               "|---|" + "---|" * len(bins)]
        for who, r in ebc:
            cells = []
            by = {tuple(b["bin"]): b for b in r["error_by_count"]}
            for b in bins:
                x = by.get(b)
                cells.append(f"{100 * x['pixels']:.0f}% / {100 * x['error']:.0f}% / {x['rmse']:.4f}" if x else "")
            md.append(f"| {'ours' if who == 'ours' else 'Cycles'} {r['threshold']:g} | " + " | ".join(cells) + " |")
        imp = res["counts_info"].get("ours_impure_prefixes")
        notes = []
        if imp:
            notes.append(f"ours' prefix renders at {', '.join(map(str, imp))} samples were not pure (some pixel went "
                         "on past its first check), so counts at those checkpoints may be too high")
        off = []
        for who, r in ebc:
            got, cam = (r["counts"].get("camera_rays") or (None, None))
            if who == "ours" and cam and got != cam:
                off.append(f"{r['threshold']:g}: {got:,} against {cam:,} ({100 * (got - cam) / cam:+.2g}%)")
        if off:
            notes.append("ours' counted samples do not add up to the render's camera rays exactly at threshold "
                         + "; ".join(off) + " (a pixel whose mean is the same at several checkpoints without its "
                         "samples being all equal, e.g. 127 of 128 samples on a light, 254 of 256, is counted as if "
                         "they were)")
        diff = [f"{r['threshold']:g}" for who, r in ebc if who == "cycles" and r["counts"].get("same_image") is False]
        if diff:
            notes.append(f"Cycles' sample-count render differed from the timed image at threshold(s) {', '.join(diff)}")
        if notes:
            md += ["", "Caveat: " + "; ".join(notes) + "."]
        md.append("")
    md += ["<details><summary>commands</summary>", "", "```sh"] + res["commands"] + ["```", "", "</details>", ""]
    return md


def write_csv(results, path):
    """The equal-quality table (path) and every measured point (path with _points.csv)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scene", "width", "height", "target_rmse", "ours_best_s", "ours_best_from", "ours_fixed_s",
                    "ours_adaptive_s", "cycles_call_best_s", "cycles_call_best_from", "cycles_call_fixed_s",
                    "cycles_call_adaptive_s", "cycles_pt_best_s", "cycles_pt_best_from", "cycles_pt_fixed_s",
                    "cycles_pt_adaptive_s", "ratio_call_best", "ratio_pt_best", "ratio_call_fixed", "ratio_pt_fixed",
                    "ratio_call_adaptive", "ratio_pt_adaptive", "max_spp", "ref_spp", "compare_rev",
                    "compare_ratio_call_best", "compare_ratio_pt_best", "compare_ratio_pt_fixed",
                    "compare_ratio_pt_adaptive"])
        for res in results:
            c = res["case"]
            for row in res["table"]:
                t, g = row["times"], row["ratios"]
                cells = [res["name"], c["width"], c["height"], f"{row['target']:g}"]
                for who, key in (("ours", "seconds"), ("cycles", "seconds"), ("cycles", "pt_seconds")):
                    cells += [fmt(t[(who, key, "best")], ".4f") if t[(who, key, "best")] else "",
                              row["best_from"][(who, key)] or ""]
                    cells += [fmt(t[(who, key, s)], ".4f") if t[(who, key, s)] else "" for s in SERIES]
                for s in ("best", "fixed", "adaptive"):
                    for key in ("seconds", "pt_seconds"):
                        v = g[(key, s)]
                        cells.append(fmt(v, ".4f") if v else "")
                cells += [res["max_spp"], res["ref_spp"]]
                before = {r["target"]: r for r in (res.get("compare") or [])}.get(row["target"])
                cells.append(res.get("compare_rev") or "")
                for k in (("seconds", "best"), ("pt_seconds", "best"), ("pt_seconds", "fixed"),
                          ("pt_seconds", "adaptive")):
                    v = before["ratios"][k] if before else None
                    cells.append(fmt(v, ".4f") if v else "")
                w.writerow(cells)
    points = os.path.splitext(path)[0] + "_points.csv"
    with open(points, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scene", "renderer", "series", "spp_or_max_spp", "threshold", "seconds", "cycles_pt_seconds",
                    "cycles_setup_seconds", "rmse", "rmse_raw", "mean_lum", "samples_mean", "samples_p10",
                    "samples_p50", "samples_p90", "share_at_min", "share_at_max", "seconds_repeats"])
        for res in results:
            for row in res["rows"]:
                for who in ("ours", "cycles"):
                    r = row.get(who)
                    if r is None:
                        continue
                    c = r.get("counts") or {}
                    w.writerow([res["name"], who, row["series"], r["spp"], fmt(r.get("threshold"), "g"),
                                f"{r['seconds']:.4f}", fmt(r.get("pt_seconds"), ".4f"),
                                fmt(r.get("setup_seconds"), ".4f"), fmt(r["rmse"], ".6g"), fmt(r["rmse_raw"], ".6g"),
                                f"{r['mean_lum']:.6g}"] +
                               [fmt(c.get(k), ".4g") for k in ("mean", "p10", "p50", "p90", "share_at_min",
                                                                "share_at_max")] +
                               [";".join(f"{x:.4f}" for x in r.get("seconds_all", []))])
