#!/usr/bin/python3
"""Equal-time convergence against Blender Cycles (issue 12, "Measure").

For every scene of tools/bench/convergence_cases.toml, renders with our renderer and with Cycles
(CPU, same camera, geometry, lights, path depth, pixel filter, threads; no denoiser, no adaptive
sampling) at a few spp and at a high-spp reference each, then reports per renderer and spp the
RMSE against its OWN reference, the render time, efficiency = 1 / (RMSE^2 x time), and the ratio
of efficiencies ours / Cycles (target >= 1). The two references are cross-checked against each
other (mean luminance, RMSE) to catch a bias that per-renderer RMSEs cannot see.

    bash tools/compare/install_blender.sh          # once: blender, numpy, matplotlib, OIIO
    /usr/bin/python3 tools/bench/convergence.py --farm build/farm/farm
        [--only NAME ...] [--spp 4,16,64] [--ref-spp 1024] [--size WxH] [--quick]
        [--out-md results/bench_convergence.md] [--reanalyze]

Writes the markdown report, a CSV next to it (same name, .csv) and per scene a side-by-side PNG at
16 spp (ours | Cycles | our reference | Cycles' reference) and an RMSE-vs-time plot into a folder
next to it (same name, no extension). EXRs, generated scenes, per-render JSON and logs go to the
work folder (build/bench_convergence). --quick is a smoke run (64x64, spp 2,4, references of 16)
whose report goes to the work folder unless --out-md is given.

The reference of each renderer is the mean of two independent halves (seeds 1 and 2, ref-spp/2
each); the test images use seed 0. An RMSE against a finite-spp reference is biased upwards by
the reference's own noise: MSE(test, ref) = var(test) + var(ref). var(ref) is estimated per
renderer from the halves A, B as mean((A - B)^2) / 4 and subtracted; the report gives both.
"""
import os
import sys
import csv
import json
import math
import shlex
import argparse
import subprocess
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "compare"))
sys.path.insert(0, HERE)
import cycles_compare  # noqa: E402  (wrapper_scene, blender_command, run, our_render_seconds, rel)
import compare_images  # noqa: E402  (read_rgb, tonemap, REC709)
import scene_gen  # noqa: E402

import numpy as np  # noqa: E402

rel = cycles_compare.rel
REF_SEEDS = (1, 2)   # the two halves of each reference
TEST_SEED = 0
FIGURE_SPP = 16      # the side-by-side figure's spp (the nearest measured one if absent)
BIAS_FLAG = 0.02     # flag a mean-luminance difference between the references above this


class RenderError(RuntimeError):
    pass


def parse_size(text):
    try:
        w, h = (int(x) for x in text.lower().split("x"))
        assert w > 0 and h > 0
        return w, h
    except (ValueError, AssertionError):
        raise argparse.ArgumentTypeError(f"--size wants WxH, got {text!r}")


def parse_spp_list(text):
    try:
        v = [int(x) for x in text.split(",") if x.strip()]
        assert v and all(x > 0 for x in v)
        return sorted(set(v))
    except (ValueError, AssertionError):
        raise argparse.ArgumentTypeError(f"--spp wants a comma-separated list of positive integers, got {text!r}")


# ---------------------------------------------------------------------------------------------
# Rendering


def prepare_scene(case, work, write=True):
    """Generates what the scene needs (OBJ on a floor, sky image); returns the scene file path.
    write=False only names the files (--reanalyze)."""
    name = case["name"]
    info = {}
    if not write:
        if "sky_image" in case:
            case["env_image"] = os.path.join(work, f"{name}_sky.exr")
        return (os.path.join(work, f"{name}.obj") if "generate" in case else rel(case["scene"])), info
    if "generate" in case:
        g = case["generate"]
        obj = os.path.join(work, f"{name}.obj")
        info["mesh"] = scene_gen.mesh_on_floor(
            rel(g["mesh"]), obj, float(g.get("height", 1.0)), float(g.get("rotate_y", 0.0)),
            tuple(g.get("mesh_albedo", (0.6, 0.6, 0.6))), tuple(g.get("floor_albedo", (0.5, 0.5, 0.5))),
            float(g.get("floor_size", 40.0)))
        scene = obj
    else:
        scene = rel(case["scene"])
    if "sky_image" in case:
        s = dict(case["sky_image"])
        path = os.path.join(work, f"{name}_sky.exr")
        info["sky"] = scene_gen.sky_image(path, **s)
        case["env_image"] = path
    return scene, info


def render_pair(case, scene, spp, seed, tag, args, work, log, repeat=1):
    """Renders one image with each renderer, `repeat` times keeping the fastest time; returns
    {'ours': {...}, 'cycles': {...}}. The repeats alternate between the renderers (ours, Cycles,
    ours, ...) so that a slow spell of the machine hits both alike."""
    name = case["name"]
    c = dict(case, spp=spp)
    jobs = {}
    for who in ("ours", "cycles"):
        exr = os.path.join(work, f"{name}_{who}_{tag}.exr")
        js = os.path.join(work, f"{name}_{who}_{tag}.json")
        meta = os.path.join(work, f"{name}_{who}_{tag}.meta.json")
        if who == "ours":
            wrapper = os.path.join(work, f"{name}_scene.toml")
            with open(wrapper, "w") as f:
                f.write(cycles_compare.wrapper_scene(c, scene))
            fields = {k: c[k] for k in ("width", "height", "spp", "max_depth", "threads")}
            fields.update(farm=shlex.quote(args.farm), scene=shlex.quote(wrapper), out=shlex.quote(exr),
                          stats=shlex.quote(js))
            cmd = shlex.split(c["ours_command"].format(**fields)) + ["--seed", str(seed)] + \
                [str(a) for a in c["ours_args"]]
        else:
            cmd = cycles_compare.blender_command(c, scene, exr, js) + ["--seed", str(seed)]
        jobs[who] = {"exr": exr, "js": js, "meta": meta, "cmd": cmd, "times": [], "first": None}
    out = {}
    if args.reanalyze:
        for who, j in jobs.items():
            if not os.path.exists(j["exr"]):
                raise RenderError(f"--reanalyze: {j['exr']} is absent")
            with open(j["meta"]) as f:
                out[who] = json.load(f)
        return out
    for i in range(repeat):
        # Each repeat renders the same image again (same seed, deterministic on both sides): only
        # the fastest time counts, so that a burst of other load on the machine does not.
        for who, j in jobs.items():
            for p in (j["exr"], j["js"]):
                if os.path.exists(p):
                    os.remove(p)
            try:
                wall = cycles_compare.run(j["cmd"], log)
            except RuntimeError as e:
                raise RenderError(f"{name}: {who} render failed, {e}") from None
            if who == "ours":
                secs, bvh = cycles_compare.our_render_seconds(j["js"], wall)
                j["times"].append({"seconds": secs, "bvh_seconds": bvh, "wall": wall})
            else:
                with open(j["js"]) as f:
                    t = json.load(f)
                j["times"].append({"seconds": t["render_seconds"], "pt_seconds": t.get("sample_seconds"),
                                   "setup_seconds": t.get("setup_seconds"), "wall": wall})
            if repeat > 1:
                img = compare_images.read_rgb(j["exr"])
                if j["first"] is None:
                    j["first"] = img
                elif not np.array_equal(img, j["first"]):
                    d = float(np.sqrt(np.mean((img - j["first"]) ** 2)))
                    print(f"  note: {who} {tag} repeat {i + 1} differs from the first render (RMSE {d:.2g})", flush=True)
    for who, j in jobs.items():
        times = j["times"]
        r = {k: min((t[k] for t in times if t.get(k) is not None), default=None) for k in times[0]}
        r["seconds_all"] = [t["seconds"] for t in times]
        if who == "cycles":
            r["pt_seconds_all"] = [t["pt_seconds"] for t in times]
        r.update(exr=j["exr"], spp=spp, seed=seed, cmd=shlex.join(j["cmd"]).replace(ROOT + os.sep, ""))  # from ROOT
        with open(j["meta"], "w") as f:
            json.dump(r, f)
        out[who] = r
    return out


# ---------------------------------------------------------------------------------------------
# Metrics


def luminance(img):
    return img @ compare_images.REC709


def analyse(case, renders, test_spps):
    """renders[(kind, spp)] -> {'ours': r, 'cycles': r}; kind 'test' or 'half1'/'half2'.
    Returns per-renderer reference stats, the rows (one per test spp) and the cross-check."""
    refs = {}
    for who in ("ours", "cycles"):
        a = compare_images.read_rgb(renders["half1"][who]["exr"])
        b = compare_images.read_rgb(renders["half2"][who]["exr"])
        ref = (a + b) / 2
        # var(ref) per pixel and channel, averaged: E[(A - B)^2] / 4 for independent halves.
        var_ref = float(np.mean((a - b) ** 2) / 4)
        refs[who] = {"img": ref, "var": var_ref, "mean_lum": float(luminance(ref).mean()),
                     "mean_rgb": [float(x) for x in ref.reshape(-1, 3).mean(0)],
                     "seconds": renders["half1"][who]["seconds"] + renders["half2"][who]["seconds"],
                     "finite": bool(np.isfinite(ref).all())}
    o, cy = refs["ours"], refs["cycles"]
    d = o["img"] - cy["img"]
    mse_refs = float(np.mean(d ** 2))
    cross = {
        "lum_ratio": o["mean_lum"] / cy["mean_lum"] if cy["mean_lum"] > 0 else float("nan"),
        "rmse": math.sqrt(mse_refs),
        # What the two references' noise alone would give: sqrt(var_o + var_c).
        "rmse_noise": math.sqrt(o["var"] + cy["var"]),
        "rel_rmse": math.sqrt(mse_refs) / max(float(cy["img"].mean()), 1e-12),
        "mean_rgb_ours": o["mean_rgb"], "mean_rgb_cycles": cy["mean_rgb"],
    }
    cross["flag"] = not (abs(cross["lum_ratio"] - 1) <= BIAS_FLAG)
    rows = []
    for spp in test_spps:
        row = {"spp": spp}
        for who in ("ours", "cycles"):
            r = renders[("test", spp)][who]
            img = compare_images.read_rgb(r["exr"])
            mse_raw = float(np.mean((img - refs[who]["img"]) ** 2))
            mse = mse_raw - refs[who]["var"]
            row[who] = dict(r, mse_raw=mse_raw, rmse_raw=math.sqrt(mse_raw),
                            # A corrected MSE at or below zero means the reference is too noisy
                            # for this spp: no estimate (the ratio is then not reported).
                            mse=mse if mse > 0 else float("nan"),
                            rmse=math.sqrt(mse) if mse > 0 else float("nan"),
                            ref_share=refs[who]["var"] / mse_raw if mse_raw > 0 else float("nan"),
                            mean_lum=float(luminance(img).mean()))
            t = r["seconds"]
            row[who]["eff"] = 1.0 / (row[who]["mse"] * t) if t > 0 else float("nan")
            row[who]["eff_raw"] = 1.0 / (mse_raw * t) if t > 0 and mse_raw > 0 else float("nan")
            if who == "cycles" and r.get("pt_seconds"):
                row[who]["eff_pt"] = 1.0 / (row[who]["mse"] * r["pt_seconds"])
        row["ratio"] = row["ours"]["eff"] / row["cycles"]["eff"]
        row["ratio_raw"] = row["ours"]["eff_raw"] / row["cycles"]["eff_raw"]
        row["ratio_pt"] = row["ours"]["eff"] / row["cycles"]["eff_pt"] if "eff_pt" in row["cycles"] else float("nan")
        rows.append(row)
    # Timed phase = fixed part + per-sample part: a least-squares line through every render of
    # the scene (test images and reference halves), per renderer and time kind.
    fits = {}
    for who, key in (("ours", "seconds"), ("cycles", "seconds"), ("cycles", "pt_seconds")):
        pts = [(r[who]["spp"], r[who].get(key)) for r in renders.values()]
        pts = [(x, y) for x, y in pts if y is not None]
        if len({x for x, _ in pts}) >= 2:
            b, a = np.polyfit([x for x, _ in pts], [y for _, y in pts], 1)
            fits[(who, key)] = (float(a), float(b))
    return refs, rows, cross, fits


# ---------------------------------------------------------------------------------------------
# Figures


def side_by_side(case, renders, refs, spp, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    e = float(case.get("exposure", 0.0))
    ours = compare_images.read_rgb(renders[("test", spp)]["ours"]["exr"])
    cyc = compare_images.read_rgb(renders[("test", spp)]["cycles"]["exr"])
    panels = [(ours, f"ours, {spp} spp"), (cyc, f"Cycles, {spp} spp"),
              (refs["ours"]["img"], "our reference"), (refs["cycles"]["img"], "Cycles' reference")]
    h, w = ours.shape[:2]
    fig, axes = plt.subplots(1, 4, figsize=(4 * 3.2 * w / max(h, w) + 0.4, 3.2 * h / max(h, w) + 0.8))
    for ax, (img, title) in zip(axes, panels):
        ax.imshow(compare_images.tonemap(img, e), interpolation="nearest")
        ax.set_title(f"{title}\nmean lum {float(luminance(img).mean()):.4g}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.suptitle(f"{case['name']}: display 2^{e:g} x linear, sRGB, clamped (same for all four)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def rmse_plot(name, rows, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.2, 4.0))
    for who, label, key, style in (("ours", "ours (render phase)", "seconds", "o-"),
                                   ("cycles", "Cycles (render call)", "seconds", "s-"),
                                   ("cycles", "Cycles (path tracing only)", "pt_seconds", "s--")):
        pts = [(r[who].get(key), r[who]["rmse"], r["spp"]) for r in rows]
        pts = [p for p in pts if p[0] and p[0] > 0 and math.isfinite(p[1])]
        if not pts:
            continue
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], style, label=label,
                  mfc="none" if key == "pt_seconds" else None)
        if key == "seconds":
            for t, e, spp in pts:
                ax.annotate(str(spp), (t, e), textcoords="offset points", xytext=(4, 3), fontsize=7)
    ax.set_xlabel("render time (s)")
    ax.set_ylabel("RMSE vs own reference (linear)")
    ax.set_title(f"{name}: lower-left is better", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# Report


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


# ---------------------------------------------------------------------------------------------


def run_scene(case, args):
    name = case["name"]
    work = args.work_dir
    log = os.path.join(work, f"{name}_log.txt")
    if not args.reanalyze and os.path.exists(log):
        os.remove(log)
    scene, info = prepare_scene(case, work, write=not args.reanalyze)
    if info:
        print(f"  generated: {json.dumps(info)}", flush=True)
    renders = {}
    half = args.ref_spp // 2
    plan = [(("test", s), s, TEST_SEED, f"{s}spp") for s in args.spp] + \
           [(k, half, seed, f"ref{half}_seed{seed}") for k, seed in zip(("half1", "half2"), REF_SEEDS)]
    for key, spp, seed, tag in plan:
        r = render_pair(case, scene, spp, seed, tag, args, work, log, args.repeat if key[0] == "test" else 1)
        renders[key] = r
        if not args.reanalyze:
            pt = r["cycles"].get("pt_seconds")
            print(f"  {tag:>16}: ours {r['ours']['seconds']:.3f} s, Cycles {r['cycles']['seconds']:.3f} s"
                  + (f" (path tracing {pt:.3f} s)" if pt else ""), flush=True)
    refs, rows, cross, fits = analyse(case, renders, args.spp)
    fig_spp = min(args.spp, key=lambda s: (abs(s - FIGURE_SPP), s))
    figure = os.path.join(args.out_dir, f"{name}_{fig_spp}spp_side_by_side.png")
    side_by_side(case, renders, refs, fig_spp, figure)
    plot = os.path.join(args.out_dir, f"{name}_rmse_vs_time.png")
    rmse_plot(name, rows, plot)
    commands = []
    for key, _spp, _seed, _tag in plan:
        commands += [renders[key]["ours"]["cmd"], renders[key]["cycles"]["cmd"]]
    return {"name": name, "case": case, "refs": refs, "rows": rows, "cross": cross, "figure": figure,
            "figure_spp": fig_spp, "plot": plot, "commands": commands, "ref_spp": args.ref_spp,
            "summary": summary(rows, cross), "fits": fits}


def main():
    p = argparse.ArgumentParser(description="Equal-time convergence benchmark against Blender Cycles (issue 12)")
    p.add_argument("--farm", default=rel("build/farm/farm"))
    p.add_argument("--cases", default=os.path.join(HERE, "convergence_cases.toml"))
    p.add_argument("--only", nargs="+", action="extend", metavar="NAME", help="scene names to run (repeatable)")
    p.add_argument("--spp", type=parse_spp_list, help="test spp, comma-separated (default 4,16,64)")
    p.add_argument("--ref-spp", type=int, help="reference spp per renderer, even (default 1024)")
    p.add_argument("--size", type=parse_size, help="WxH for every scene (default: each scene's own)")
    p.add_argument("--threads", type=int, help="threads for both renderers (default: the cases file's, 2)")
    p.add_argument("--repeat", type=int,
                   help="render each test image this many times and keep the fastest time (default 3; references once)")
    p.add_argument("--quick", action="store_true", help="smoke run: 64x64, spp 2,4, references of 16")
    p.add_argument("--out-md", help="report (default results/bench_convergence.md; with --quick the work folder)")
    p.add_argument("--work-dir", help="EXRs, generated scenes, logs (default build/bench_convergence[_quick])")
    p.add_argument("--notes", default=os.path.join(HERE, "convergence_notes.md"),
                   help="markdown appended to the report (observations); '' for none")
    p.add_argument("--reanalyze", action="store_true",
                   help="do not render: recompute metrics, figures and report from the work folder's files")
    argv = sys.argv[1:]
    args = p.parse_args()
    if args.quick:
        args.spp = args.spp or [2, 4]
        args.ref_spp = args.ref_spp or 16
        args.size = args.size or (64, 64)
        args.repeat = args.repeat or 1
    args.spp = args.spp or [4, 16, 64]
    args.repeat = max(1, args.repeat or 3)
    args.ref_spp = args.ref_spp or 1024
    if args.ref_spp < 2 or args.ref_spp % 2:
        p.error("--ref-spp must be even (the reference is two halves)")
    args.work_dir = os.path.abspath(args.work_dir or rel("build/bench_convergence" + ("_quick" if args.quick else "")))
    args.out_md = os.path.abspath(args.out_md or (os.path.join(args.work_dir, "bench_convergence.md") if args.quick
                                                  else rel("results/bench_convergence.md")))
    base = os.path.splitext(args.out_md)[0]
    args.out_csv, args.out_dir = base + ".csv", base
    if args.quick and args.notes == p.get_default("notes"):
        args.notes = ""  # the observations belong to a full run
    args.farm = os.path.abspath(args.farm)
    if not args.reanalyze:
        if not os.access(args.farm, os.X_OK):
            p.error(f"{args.farm} is not an executable (build it: ninja -C build)")
        v = subprocess.run(["blender", "--version"], capture_output=True, text=True) if _have("blender") else None
        if v is None or v.returncode != 0:
            p.error("blender is not installed: run `bash tools/compare/install_blender.sh`")
        args.blender_version = v.stdout.split()[1] if len(v.stdout.split()) > 1 else "?"
    import time as _time
    info_path = os.path.join(args.work_dir, "run_info.json")
    if args.reanalyze:
        # The report describes the run that made the renders, not this re-analysis.
        with open(info_path) as f:
            info = json.load(f)
        args.farm_mtime, args.load_start, args.load_end = info["farm_mtime"], info["load_start"], info["load_end"]
        args.farm_source, args.farm_sha = info["farm_source"], info["farm_sha"]
        args.farm = info.get("farm_run", args.farm)
        args.repeat = info.get("repeat", args.repeat)
        args.commit, args.dirty, args.blender_version = info["commit"], info["dirty"], info["blender_version"]
        argv = info["argv"]
    else:
        args.farm_mtime = _time.strftime("%Y-%m-%d %H:%M", _time.localtime(os.path.getmtime(args.farm)))
        # Run a copy: a rebuild of build/farm/farm during the run (another engineer's ninja) must
        # not mix two binaries in one report.
        import shutil
        import hashlib
        os.makedirs(args.work_dir, exist_ok=True)
        snapshot = os.path.join(args.work_dir, "farm")
        shutil.copy2(args.farm, snapshot)
        with open(snapshot, "rb") as f:
            args.farm_sha = hashlib.sha256(f.read()).hexdigest()[:12]
        args.farm_source, args.farm = args.farm, snapshot
        args.farm_run = snapshot
        args.load_start = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        args.commit, args.dirty = git_info()
    with open(args.cases, "rb") as f:
        spec = tomllib.load(f)
    defaults = dict(cycles_compare.DEFAULTS, **spec.get("defaults", {}))
    os.makedirs(args.work_dir, exist_ok=True)
    os.makedirs(args.out_dir, exist_ok=True)
    names = [c["name"] for c in spec.get("scene", [])]
    for n in args.only or []:
        if n not in names:
            p.error(f"--only {n}: no such scene (have {', '.join(names)})")
    results, skipped, failed = [], [], []
    threads = set()
    for raw in spec.get("scene", []):
        case = dict(defaults, **raw)
        name = case["name"]
        if args.only and name not in args.only:
            continue
        if args.size:
            case["width"], case["height"] = args.size
        if args.threads:
            case["threads"] = args.threads
        threads.add(case["threads"])
        need = list(case.get("needs", [])) + ([case["scene"]] if "scene" in case else [])
        missing = [n for n in need if not os.path.exists(rel(n))]
        if missing:
            print(f"skip {name}: {', '.join(missing)} absent", flush=True)
            skipped.append((name, ", ".join(f"`{m}`" for m in missing) + " absent"))
            continue
        print(f"scene {name} ({case['width']}x{case['height']}) ...", flush=True)
        try:
            res = run_scene(case, args)
        except (RenderError, OSError, ValueError, KeyError) as e:
            msg = str(e).replace("\n", " ")
            print(f"FAILED {name}: {msg}", file=sys.stderr, flush=True)
            failed.append((name, msg))
            continue
        for r in res["rows"]:
            print(f"  {r['spp']:>5} spp: RMSE ours {fmt(r['ours']['rmse'], '.5f')} Cycles {fmt(r['cycles']['rmse'], '.5f')}"
                  f", ratio {fmt(r['ratio'], '.3f')} (PT {fmt(r['ratio_pt'], '.3f')})", flush=True)
        print(f"  references: lum ratio ours/Cycles {res['cross']['lum_ratio']:.4f}, RMSE {res['cross']['rmse']:.5f}"
              f" (noise alone {res['cross']['rmse_noise']:.5f})" + ("  BIAS?" if res["cross"]["flag"] else ""),
              flush=True)
        results.append(res)
    args.threads_note = " / ".join(f"{t} threads" for t in sorted(threads)) or "? threads"
    if not args.reanalyze:
        args.load_end = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        with open(info_path, "w") as f:
            json.dump({k: getattr(args, k) for k in ("farm_mtime", "load_start", "load_end", "commit", "dirty",
                                                      "blender_version", "farm_source", "farm_sha", "farm_run",
                                                      "repeat")}
                      | {"argv": argv}, f)
    with open(args.out_md, "w") as f:
        f.write(markdown(results, skipped, failed, args, argv))
    write_csv(results, args.out_csv)
    print(f"wrote {args.out_md}, {args.out_csv} and {args.out_dir}/")
    return 1 if failed else 0


def _have(cmd):
    from shutil import which
    return which(cmd) is not None


if __name__ == "__main__":
    sys.exit(main())
