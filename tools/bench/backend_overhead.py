#!/usr/bin/env python3
"""Benchmarks of the farm with other renderers behind it (issue 27), written to
results/bench_backends.{csv,md}.

1. Per-block overhead of each backend.
   POV-Ray: one `povray` process per block; its cost is timed directly, wall and CPU seconds of
   a 4x4 region run alone, then 8 at once (the worker runs 4 per render thread, because a
   povray run mostly waits).
   Blender: `farm render --workers 1 --threads 1 --policy fixed` (one Blender process) of one
   image at several block sizes against the same with one block covering the whole image; the
   extra wall time divided by the extra blocks is what a block costs beyond its pixels.
2. Blender's farm efficiency on a job of about a minute: `farm single --threads 2` (Blender's own
   full-frame render on both cores) against `farm render --workers 2` (one thread each), for
   fixed block sizes and the default policy; efficiency = single / farm (POV-Ray's:
   tools/bench/povray_costs.py). Every farm image is
   compared with single's, byte for byte.
Usage: tools/bench/backend_overhead.py [--farm build/farm/farm] [--quick]
"""
import argparse, csv, datetime, filecmp, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
CHESS2 = "/usr/share/doc/povray/examples/advanced/chess2.pov"


def timed(cmd, cwd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(" ".join(cmd) + " failed:\n" + p.stdout[-3000:])
    return time.monotonic() - t0, p.stdout


def blocks_of(width, height, block):
    return -(-width // block) * -(-height // block)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--quick", action="store_true", help="tiny sizes, to check the script")
    a = ap.parse_args()
    farm = os.path.abspath(a.farm)
    tmp = tempfile.mkdtemp(prefix="bench_backends_")
    shutil_copy = lambda s, d: open(d, "wb").write(open(s, "rb").read())
    shutil_copy(CHESS2, os.path.join(tmp, "chess2.pov"))
    q = a.quick
    blend_small = os.path.join(tmp, "small", "scene.blend")
    blend_big = os.path.join(tmp, "big", "scene.blend")
    for path, size in ((blend_small, (128, 96, 64)), (blend_big, (96, 72, 64) if q else (384, 288, 2000))):
        subprocess.run(["blender", "-b", "--factory-startup", "-P", os.path.join(ROOT, "tools/blender/make_test_scene.py"),
                        "--", path] + [str(v) for v in size], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows = []
    # POV-Ray: a 4x4 region of chess2 at 128x96, as a worker runs it (+BS4 +WT1), alone and 8 at once.
    region = ["povray", "+Ichess2.pov", "+FN8", "+W128", "+H96", "+A0.3", "+BS4", "+WT1", "-D", "-V",
              "+SR1", "+ER4", "+SC1", "+EC4"]
    for at_once in (1, 8):
        runs = 2 if q else 5
        before = os.times()
        t0 = time.monotonic()
        for _ in range(runs):
            procs = [subprocess.Popen(region + [f"+Oregion{i}.png"], cwd=tmp, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL) for i in range(at_once)]
            if any(p.wait() != 0 for p in procs):
                raise RuntimeError("povray failed on a 4x4 region")
        wall = (time.monotonic() - t0) / runs
        after = os.times()
        cpu = ((after.children_user - before.children_user) + (after.children_system - before.children_system)) / runs / at_once
        rows.append({"part": "overhead", "backend": "povray chess2.pov +A0.3", "image": "128x96",
                     "setting": f"4x4 region, {at_once} at once", "blocks": at_once, "seconds": round(wall, 3),
                     "reference_seconds": "", "value": f"{1000 * wall:.0f} wall, {1000 * cpu:.0f} CPU",
                     "unit": "ms per run (CPU per process)", "identical": ""})
        print(rows[-1], flush=True)
    cases = {
        # name: (scene, size args, image size, block sizes for overhead)
        "blender make_test_scene 64 spp": (blend_small, ["--frame", "1"], (128, 96), [8, 16] if q else [4, 8, 16, 32]),
    }
    for name, (scene, extra, (w, h), sizes) in cases.items():
        size = ["--width", str(w), "--height", str(h)]
        base = [farm, "render", scene, "-o", os.path.join(tmp, "o.png"), "--workers", "1", "--threads", "1",
                "--policy", "fixed", "--no-journal"] + size + extra
        whole, _ = timed(base + ["--block", str(max(w, h))], tmp)
        for b in sizes:
            t, _ = timed(base + ["--block", str(b)], tmp)
            n = blocks_of(w, h, b)
            rows.append({"part": "overhead", "backend": name, "image": f"{w}x{h}", "setting": f"block {b}", "blocks": n,
                         "seconds": round(t, 3), "reference_seconds": round(whole, 3),
                         "value": round(1000 * (t - whole) / (n - 1), 1), "unit": "ms per block", "identical": ""})
            print(rows[-1], flush=True)
    # POV-Ray's efficiency, with its CPU accounted per policy: tools/bench/povray_costs.py.
    eff_cases = {
        "blender make_test_scene 2000 spp": (blend_big, ["--frame", "1"], ["fixed 32", "fixed 64", "default"]),
    }
    for name, (scene, extra, policies) in eff_cases.items():
        single_png = os.path.join(tmp, "single.png")
        single, _ = timed([farm, "single", scene, "-o", single_png, "--threads", "2"] + extra, tmp)
        for policy in policies:
            args = [] if policy == "default" else ["--policy", "fixed", "--block", policy.split()[1]]
            out = os.path.join(tmp, "farm.png")
            t, log = timed([farm, "render", scene, "-o", out, "--workers", "2", "--threads", "1", "--no-journal"] + args + extra, tmp)
            blocks = ""
            for line in log.splitlines():
                if "done in" in line and "blocks" in line:
                    blocks = line.split("done in")[1].split(":")[1].split("blocks")[0].strip()
            rows.append({"part": "efficiency", "backend": name, "image": " ".join(extra), "setting": policy, "blocks": blocks,
                         "seconds": round(t, 2), "reference_seconds": round(single, 2), "value": round(single / t, 3),
                         "unit": "single / farm", "identical": filecmp.cmp(single_png, out, shallow=False)})
            print(rows[-1], flush=True)
    out_dir = os.path.join(ROOT, "results") if not q else tmp
    with open(os.path.join(out_dir, "bench_backends.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        wr.writeheader()
        wr.writerows(rows)
    with open(os.path.join(out_dir, "bench_backends.md"), "w") as f:
        f.write("# Other renderers behind the farm: per-block overhead and efficiency\n\n")
        f.write(f"Made by `tools/bench/backend_overhead.py{' --quick' if q else ''}` on "
                f"{datetime.date.today().isoformat()}, {os.cpu_count()} cores (a shared machine: "
                "ratios measured side by side in one run).\n\n")
        f.write("| part | backend | image | setting | blocks | seconds | reference s | value | unit | identical |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write("| " + " | ".join(str(r[k]) for k in r) + " |\n")
        f.write("\nOverhead: reference = the same run with one block covering the image; value = (seconds - "
                "reference) / (blocks - 1).\nEfficiency: reference = `farm single --threads 2`; the farm ran "
                "`--workers 2 --threads 1`; identical = the farm's PNG "
                "equals single's byte for byte.\n")
    print("wrote", os.path.join(out_dir, "bench_backends.md"))


if __name__ == "__main__":
    sys.exit(main())
