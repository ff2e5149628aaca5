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

--adaptive (issue 41 item 5) measures equal-quality time instead, with adaptive sampling on both
sides: the fixed-spp series of both renderers (default 4,16,64,256) plus ours at several
--noise-threshold values and Cycles at several adaptive_threshold values (automatic min samples),
all at most --max-spp samples per pixel (default: the reference spp); each image's RMSE against
its own renderer's fixed reference; for a few target RMSEs each renderer's time to reach it
(log-log interpolation over its measured points, fixed, adaptive and the better of the two) and the
ratio Cycles / ours, with Cycles' render call and its path tracing alone; and where each adaptive
render stopped its pixels (untimed extra renders, tools/bench/convergence_samples.py). Report:
results/bench_convergence_adaptive.md (+ .csv, _points.csv, plots in the folder of that name).

    /usr/bin/python3 tools/bench/convergence.py --adaptive --farm /tmp/conv/farm
        [--thresholds-ours 0.1,0.05,0.03,0.02] [--thresholds-cycles 0.1,0.05,0.02,0.01]
        [--max-spp N] [--targets 0.02,0.01] [--no-sample-counts] (and the options above)
        [--reuse-from EARLIER_WORK_DIR [--reuse-cycles]] [--compare-rev REV [--compare-label TEXT]]
        [--intro FILE]

After a change to our renderer only, --reuse-from takes both references and Cycles' sample-count
renders from an earlier run's work folder (checking that our fixed-spp and Cycles' images come out
the same), and --compare-rev puts the ratios of the report committed at REV beside the new ones
(tools/bench/convergence_compare.py). --intro is markdown put under the header (default
tools/bench/convergence_adaptive_intro.md, for what changed since the earlier run).

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
import json
import argparse
import subprocess
import tomllib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from compare import cycles_compare  # noqa: E402  (DEFAULTS, rel)
# One job per module: rendering, metrics, figures, report (this file: the command line and the run).
from bench.convergence_figures import rmse_plot, side_by_side  # noqa: E402
from bench.convergence_metrics import analyse  # noqa: E402
from bench.convergence_render import REF_SEEDS, TEST_SEED, RenderError, render_pair, start_scene  # noqa: E402
from bench.convergence_report import fmt, git_info, summary  # noqa: E402
from bench import convergence_adaptive_report, convergence_report  # noqa: E402
from bench.convergence_adaptive import run_scene_adaptive  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

rel = cycles_compare.rel
FIGURE_SPP = 16      # the side-by-side figure's spp (the nearest measured one if absent)


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


def parse_float_list(text):
    try:
        v = [float(x) for x in text.split(",") if x.strip()]
        assert v and all(x > 0 for x in v)
        return v
    except (ValueError, AssertionError):
        raise argparse.ArgumentTypeError(f"want a comma-separated list of positive numbers, got {text!r}")


def run_scene(case, args):
    name, work, log, scene = start_scene(case, args)
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
    a = p.add_argument_group("--adaptive: equal-quality time with adaptive sampling (issue 41 item 5)")
    a.add_argument("--adaptive", action="store_true",
                   help="fixed and adaptive series of both renderers, equal-quality times (default report "
                        "results/bench_convergence_adaptive.md; fixed spp default 4,16,64,256)")
    a.add_argument("--thresholds-ours", type=parse_float_list, default=[0.1, 0.05, 0.03, 0.02],
                   help="our --noise-threshold values (default 0.1,0.05,0.03,0.02)")
    a.add_argument("--thresholds-cycles", type=parse_float_list, default=[0.1, 0.05, 0.02, 0.01],
                   help="Cycles' adaptive_threshold values (default 0.1,0.05,0.02,0.01; 0.01 is its default)")
    a.add_argument("--max-spp", type=int, help="most samples per pixel of the adaptive renders (default: --ref-spp)")
    a.add_argument("--targets", type=parse_float_list,
                   help="target RMSEs (default: round values that every series of both renderers reaches, per scene)")
    a.add_argument("--target-count", type=int, default=3, help="how many targets to pick per scene (default 3)")
    a.add_argument("--no-sample-counts", dest="sample_counts", action="store_false",
                   help="skip the untimed renders that find how many samples each pixel took")
    a.add_argument("--reuse-from", metavar="DIR",
                   help="an earlier run's work folder: take both renderers' references and Cycles' untimed "
                        "sample-count renders from its files instead of rendering them (e.g. after a change to "
                        "our adaptive sampling); the test images of both renderers are rendered and timed again")
    a.add_argument("--reuse-cycles", action="store_true",
                   help="with --reuse-from, Cycles' timed test images too (their times are then that run's, under "
                        "its load: only ours are rendered again)")
    a.add_argument("--compare-rev", metavar="REV",
                   help="a commit whose results/bench_convergence_adaptive.* to compare with: its measured points "
                        "(_points.csv) give that run's ratios at this run's targets (its own targets are added), "
                        "in columns named by --compare-label")
    a.add_argument("--compare-label", help="the heading of the --compare-rev columns (default 'at REV')")
    a.add_argument("--intro", default=os.path.join(HERE, "convergence_adaptive_intro.md"),
                   help="markdown put under the report's header (what changed since an earlier run); '' for none")
    argv = sys.argv[1:]
    args = p.parse_args()
    if args.quick:
        args.spp = args.spp or [2, 4]
        args.ref_spp = args.ref_spp or 16
        args.size = args.size or (64, 64)
        args.repeat = args.repeat or 1
    if args.adaptive:
        args.spp = args.spp or [4, 16, 64, 256]
        if args.notes == p.get_default("notes"):
            args.notes = os.path.join(HERE, "convergence_adaptive_notes.md")
    args.spp = args.spp or [4, 16, 64]
    args.repeat = max(1, args.repeat or 3)
    args.ref_spp = args.ref_spp or 1024
    if args.ref_spp < 2 or args.ref_spp % 2:
        p.error("--ref-spp must be even (the reference is two halves)")
    args.max_spp = args.max_spp or args.ref_spp
    stem = "bench_convergence" + ("_adaptive" if args.adaptive else "")
    args.work_dir = os.path.abspath(args.work_dir or rel(f"build/{stem}" + ("_quick" if args.quick else "")))
    args.out_md = os.path.abspath(args.out_md or (os.path.join(args.work_dir, f"{stem}.md") if args.quick
                                                  else rel(f"results/{stem}.md")))
    base = os.path.splitext(args.out_md)[0]
    args.compare_csv = rel(f"results/{stem}.csv")  # --compare-rev: the committed report's CSV
    args.out_csv, args.out_dir = base + ".csv", base
    if args.quick and args.notes == p.get_default("notes"):
        args.notes = ""  # the observations belong to a full run
    if (args.quick or not args.adaptive) and args.intro == p.get_default("intro"):
        args.intro = ""  # the default intro is the full --adaptive run's
    args.farm = os.path.abspath(args.farm)
    if args.reuse_from:
        if not args.adaptive:
            p.error("--reuse-from is for --adaptive runs")
        args.reuse_from = os.path.abspath(args.reuse_from)
        if os.path.abspath(args.reuse_from) == os.path.abspath(args.work_dir or ""):
            p.error("--reuse-from must be another folder than --work-dir")
    if args.reuse_cycles and not args.reuse_from:
        p.error("--reuse-cycles needs --reuse-from")
    if args.compare_rev and not args.adaptive:
        p.error("--compare-rev is for --adaptive runs")
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
        args.reuse_from, args.reuse_cycles = info.get("reuse_from"), info.get("reuse_cycles", False)
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
            res = (run_scene_adaptive if args.adaptive else run_scene)(case, args)
        except (RenderError, OSError, ValueError, KeyError) as e:
            msg = str(e).replace("\n", " ")
            print(f"FAILED {name}: {msg}", file=sys.stderr, flush=True)
            failed.append((name, msg))
            continue
        if args.adaptive:
            for r in res["rows"]:
                print(f"  {r['series']:>8} " + ", ".join(
                    f"{w} {r[w]['label']}: {r[w]['seconds']:.3f} s RMSE {fmt(r[w]['rmse'], '.5f')}"
                    + (f" ({r[w]['counts']['mean']:.1f} spp)" if r[w].get("counts") else "")
                    for w in ("ours", "cycles") if r.get(w)), flush=True)
            for row in res["table"]:
                print(f"  RMSE {row['target']:g}: Cycles/ours {fmt(row['ratios'][('seconds', 'best')] or float('nan'), '.2f')}"
                      f" (PT {fmt(row['ratios'][('pt_seconds', 'best')] or float('nan'), '.2f')})", flush=True)
            results.append(res)
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
                                                      "repeat", "reuse_from", "reuse_cycles")}
                      | {"argv": argv}, f)
    report = convergence_adaptive_report if args.adaptive else convergence_report
    with open(args.out_md, "w") as f:
        f.write(report.markdown(results, skipped, failed, args, argv))
    report.write_csv(results, args.out_csv)
    print(f"wrote {args.out_md}, {args.out_csv} and {args.out_dir}/")
    return 1 if failed else 0


def _have(cmd):
    from shutil import which
    return which(cmd) is not None


if __name__ == "__main__":
    sys.exit(main())
