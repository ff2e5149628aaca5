"""The markdown report, its one-sentence summaries and the CSV of tools/bench/convergence.py.
Imported by convergence.py.
"""
import csv
import math
import os
import shlex
import subprocess

from bench.convergence_metrics import BIAS_FLAG
from bench.convergence_render import REF_SEEDS, TEST_SEED
from farmtools import ROOT


def git_info():
    def git(*a):
        r = subprocess.run(["git", "-C", ROOT] + list(a), capture_output=True, text=True)
        return r.stdout.rstrip("\n") if r.returncode == 0 else ""
    commit = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    dirty = [l[3:] for l in git("status", "--porcelain", "--untracked-files=all", "renderer", "farm").splitlines() if l]
    return commit, dirty


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) and math.isfinite(x) else "n/a"


def markdown(results, skipped, failed, args, argv):
    commit, dirty = args.commit, args.dirty
    md = ["# Equal-time convergence: ours against Blender Cycles", "",
          "Made by `" + shlex.join(["/usr/bin/python3", "tools/bench/convergence.py"] + argv) + "` "
          f"(issue 12, \"Measure\"; scenes in `{os.path.relpath(args.cases, ROOT)}`).", "",
          f"- farm: `{os.path.relpath(args.farm_source, ROOT)}` (built {args.farm_mtime}, sha256 {args.farm_sha}; "
          f"run as a copy in the work folder, `{os.path.relpath(args.farm, ROOT)}`), repository at commit {commit}"
          + (f"; uncommitted changes under renderer/ or farm/: {', '.join(dirty)}" if dirty else "") + ".",
          f"- Blender {args.blender_version}, Cycles on the CPU; both renderers on {args.threads_note}.",
          f"- Load average (1, 5, 15 min) at the start: {args.load_start}, at the end: {args.load_end}; "
          f"{os.cpu_count()} cores.",
          f"- Test images at {', '.join(map(str, args.spp))} spp (seed {TEST_SEED}); references of {args.ref_spp} spp "
          f"each, the mean of two halves of {args.ref_spp // 2} spp (seeds {REF_SEEDS[0]} and {REF_SEEDS[1]}). Every test "
          f"image is rendered {args.repeat} time(s), alternating between the renderers, and the fastest time kept "
          "(the repeats give the same image; a difference is printed as a note); references once.", "",
          "## How to read this", "",
          "- **RMSE**: linear radiance over all pixels and RGB channels, of each image against its own "
          "renderer's reference, with the reference's own noise removed: MSE(test, ref) = var(test) + var(ref), "
          "and var(ref) is estimated from the two independent halves A, B of the reference as mean((A - B)^2) / 4 "
          "and subtracted (\"raw\" values in the CSV keep it; the share it made is listed per scene).",
          "- **Times**: ours is the render phase of `farm single --stats` (after parsing, mesh loading "
          "and the BVH build: path tracing, but textures are read lazily through OpenImageIO's texture cache, "
          "so a textured scene's first-touch decoding of texture tiles is inside it). Cycles' *render call* is the wall time of "
          "`bpy.ops.render.render` (not Blender's start-up or the scene import), which includes Cycles' scene "
          "sync, kernel loading, image loading, BVH build and light/background importance tables; *Cycles PT* is the path "
          "tracing alone (from Cycles' \"Sample 0/N\" status to \"Finished\", timed in tools/compare/cycles_render.py), "
          "the closer match to ours.",
          "- **Efficiency** = 1 / (RMSE^2 x time); **ratio** = ours / Cycles (>= 1 means we reach a given noise "
          "level at least as soon: the target of issue 12). *ratio* uses Cycles' render call, *ratio PT* its path "
          "tracing time only (stricter for us, and the fairer one at low spp where Cycles' set-up dominates).",
          "- **Reference cross-check**: our reference against Cycles'. Their mean-luminance ratio should be 1 within "
          f"noise; a difference above {BIAS_FLAG:.0%} is flagged (**BIAS?**) and explained in the scene's note. "
          "\"RMSE between references\" is compared with what their noise alone gives, sqrt(var_ours + var_Cycles): "
          "an excess is a systematic difference (bias, material or light conversion), not noise.", "",
          "## Summary: efficiency ratio ours / Cycles", "",
          "| scene | " + " | ".join(f"{s} spp ratio (PT)" for s in args.spp) + " | reference lum ratio ours/Cycles |",
          "|---|" + "---|" * (len(args.spp) + 1)]
    for res in results:
        cells = [f"{fmt(r['ratio'], '.3f')} ({fmt(r['ratio_pt'], '.3f')})" for r in res["rows"]]
        flag = " **BIAS?**" if res["cross"]["flag"] else ""
        md.append(f"| {res['name']} | " + " | ".join(cells) + f" | {res['cross']['lum_ratio']:.4f}{flag} |")
    for name, why in skipped:
        md.append(f"| {name} | skipped: {why} |" + " |" * len(args.spp))
    for name, why in failed:
        md.append(f"| {name} | FAILED: {why} |" + " |" * len(args.spp))
    md.append("")
    for res in results:
        case, cross = res["case"], res["cross"]
        md += [f"## {res['name']}", "", " ".join(case.get("note", "").split()), "",
               f"{case['width']}x{case['height']}, our max_depth {case['max_depth']} (Cycles {case['max_depth'] - 1} "
               f"bounces), {case['threads']} threads. [side by side at {res['figure_spp']} spp]"
               f"({os.path.relpath(res['figure'], os.path.dirname(args.out_md))}), "
               f"[RMSE vs time]({os.path.relpath(res['plot'], os.path.dirname(args.out_md))}).", "",
               "| spp | our time (s) | Cycles time, render call (s) | Cycles PT (s) | our RMSE | Cycles RMSE | "
               "efficiency ratio ours/Cycles | ratio PT |",
               "|---|---|---|---|---|---|---|---|"]
        for r in res["rows"]:
            o, c = r["ours"], r["cycles"]
            md.append(f"| {r['spp']} | {o['seconds']:.3f} | {c['seconds']:.3f} | {fmt(c.get('pt_seconds'), '.3f')} | "
                      f"{fmt(o['rmse'], '.5f')} | {fmt(c['rmse'], '.5f')} | **{fmt(r['ratio'], '.3f')}** | "
                      f"{fmt(r['ratio_pt'], '.3f')} |")
        ro, rc = res["refs"]["ours"], res["refs"]["cycles"]
        md.append(f"| ref {args.ref_spp} | {ro['seconds']:.2f} | {rc['seconds']:.2f} | | "
                  f"(noise {math.sqrt(ro['var']):.5f}) | (noise {math.sqrt(rc['var']):.5f}) | | |")
        flag = f" **BIAS? more than {BIAS_FLAG:.0%} apart.**" if cross["flag"] else ""
        shares = ", ".join(f"{r['spp']} spp: ours {fmt(100 * r['ours']['ref_share'], '.1f')}%, "
                           f"Cycles {fmt(100 * r['cycles']['ref_share'], '.1f')}%" for r in res["rows"])
        md += ["", f"Reference cross-check: mean luminance ours/Cycles **{cross['lum_ratio']:.4f}**{flag} "
               f"(RGB means ours ({', '.join(f'{x:.4f}' for x in cross['mean_rgb_ours'])}), Cycles "
               f"({', '.join(f'{x:.4f}' for x in cross['mean_rgb_cycles'])})); RMSE between the references "
               f"{cross['rmse']:.5f} (rel. {cross['rel_rmse']:.3f}) against {cross['rmse_noise']:.5f} from their noise alone.",
               "", f"Share of the raw MSE that was the reference's noise (subtracted): {shares}.", ""]
        fit_text = []
        for (who, key), label in ((("ours", "seconds"), "ours (render phase)"),
                                  (("cycles", "seconds"), "Cycles (render call)"),
                                  (("cycles", "pt_seconds"), "Cycles (path tracing)")):
            if (who, key) in res["fits"]:
                a, b = res["fits"][(who, key)]
                fit_text.append(f"{label} {a:.2f} s + {1000 * b:.2f} ms/spp")
        if fit_text:
            md += ["Timed phase as fixed + per-sample cost (least squares over this scene's renders): "
                   + "; ".join(fit_text) + ".", ""]
        md += [f"Measured: {res['summary']}", ""]
        md += ["<details><summary>commands</summary>", "", "```sh"] + res["commands"] + ["```", "", "</details>", ""]
    if args.notes and os.path.exists(args.notes):
        with open(args.notes) as f:
            md += [f.read().rstrip(), ""]
    return "\n".join(md)


def summary(rows, cross):
    """One honest sentence from the numbers."""
    ok = [r for r in rows if math.isfinite(r["ratio"])]
    if not ok:
        return "no finite efficiency ratio (reference too noisy for these spp?)."
    worst = min(ok, key=lambda r: r["ratio"])
    best = max(ok, key=lambda r: r["ratio"])
    words = []
    if all(r["ratio"] >= 1 for r in ok):
        words.append(f"ours is at least as efficient at every spp (ratio {worst['ratio']:.2f} to {best['ratio']:.2f})")
    elif all(r["ratio"] < 1 for r in ok):
        words.append(f"Cycles is more efficient at every spp: ours needs {1 / best['ratio']:.1f}x to "
                     f"{1 / worst['ratio']:.1f}x its time for the same RMSE (ratio {worst['ratio']:.3f} at {worst['spp']} spp)")
    else:
        words.append(f"mixed: ratio {worst['ratio']:.3f} at {worst['spp']} spp, {best['ratio']:.3f} at {best['spp']} spp")
    r16 = min(ok, key=lambda r: abs(r["spp"] - 16))
    words.append(f"at {r16['spp']} spp our RMSE is {r16['ours']['rmse'] / r16['cycles']['rmse']:.2f}x Cycles' in "
                 f"{r16['ours']['seconds'] / r16['cycles']['seconds']:.2f}x its render-call time "
                 f"({fmt(r16['ours']['seconds'] / r16['cycles'].get('pt_seconds', float('nan')), '.2f')}x its path tracing time)")
    words.append(f"the references differ by {100 * (cross['lum_ratio'] - 1):+.2f}% in mean luminance" +
                 (" (flagged)" if cross["flag"] else ""))
    return "; ".join(words) + "."


def write_csv(results, path):
    cols = ["scene", "width", "height", "spp", "ref_spp", "ours_seconds", "ours_wall_seconds", "cycles_seconds",
            "cycles_pt_seconds", "cycles_setup_seconds", "cycles_wall_seconds", "ours_rmse", "cycles_rmse",
            "ours_rmse_raw", "cycles_rmse_raw", "ours_ref_noise_rmse", "cycles_ref_noise_rmse", "ours_efficiency",
            "cycles_efficiency", "efficiency_ratio", "efficiency_ratio_pt", "efficiency_ratio_raw",
            "ref_lum_ratio", "ref_rmse", "ref_rmse_noise", "ours_mean_lum", "cycles_mean_lum",
            "ours_seconds_repeats", "cycles_seconds_repeats", "cycles_pt_seconds_repeats"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for res in results:
            c, cr = res["case"], res["cross"]
            for r in res["rows"]:
                o, cy = r["ours"], r["cycles"]
                w.writerow([res["name"], c["width"], c["height"], r["spp"], res["ref_spp"],
                            f"{o['seconds']:.4f}", f"{o['wall']:.4f}", f"{cy['seconds']:.4f}",
                            fmt(cy.get("pt_seconds"), ".4f"), fmt(cy.get("setup_seconds"), ".4f"), f"{cy['wall']:.4f}",
                            fmt(o["rmse"], ".6g"), fmt(cy["rmse"], ".6g"), fmt(o["rmse_raw"], ".6g"),
                            fmt(cy["rmse_raw"], ".6g"), fmt(math.sqrt(res["refs"]["ours"]["var"]), ".6g"),
                            fmt(math.sqrt(res["refs"]["cycles"]["var"]), ".6g"), fmt(o["eff"], ".6g"),
                            fmt(cy["eff"], ".6g"), fmt(r["ratio"], ".5g"), fmt(r["ratio_pt"], ".5g"),
                            fmt(r["ratio_raw"], ".5g"), f"{cr['lum_ratio']:.5f}", f"{cr['rmse']:.6g}",
                            f"{cr['rmse_noise']:.6g}", f"{o['mean_lum']:.6g}", f"{cy['mean_lum']:.6g}",
                            ";".join(f"{x:.4f}" for x in o.get("seconds_all", [])),
                            ";".join(f"{x:.4f}" for x in cy.get("seconds_all", [])),
                            ";".join(fmt(x, ".4f") for x in cy.get("pt_seconds_all", []))])
