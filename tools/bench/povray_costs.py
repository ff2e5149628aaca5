#!/usr/bin/env python3
"""Where a POV-Ray job's time goes through the farm (issue 27), written to
results/bench_povray_costs.{csv,md}. Debian's chess2.pov, +A0.3, on this machine's cores:

1. Grid: POV-Ray's internal block size (+BS) costs CPU. The farm carves blocks on a grid and
   runs povray with +BS equal to it (other +BS values change anti-aliased pixels at block edges),
   so the grid is paid on every block and in `farm single`. Full-frame renders, +WT2, each +BS.
2. Regions: the same image as 128x128 regions, one povray process each (+BS32 +WT1, as a worker
   runs them with the farm's default grid), 2 at once and 8 at once, against the full frame: the CPU regions add (a parse
   per process, anti-aliasing at region edges) and what running 8 at once on 2 cores adds.
3. Farm: `farm single --threads 2` against `farm render --workers 2 --threads 1` with each policy
   of --policies ("default": none given, which for POV-Ray is fixed blocks, 128 at 960x720), with a `povray` on PATH that records each run's CPU: efficiency (single's wall
   over the farm's), the farm's own CPU (total - povray's) and the idle core time (cores x wall -
   CPU), i.e. start-up and the tail.
Usage: tools/bench/povray_costs.py [--farm build/farm/farm] [--width 640 --height 480] [--quick]
       [--policies default,fixed:64,factoring,seed]
"""
import argparse, csv, datetime, os, resource, shutil, stat, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
CHESS2 = "/usr/share/doc/povray/examples/advanced/chess2.pov"


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measured(fn):
    """Runs fn(); returns (wall seconds, CPU seconds of the processes it ran and waited for)."""
    c0, t0 = children_cpu(), time.monotonic()
    fn()
    return time.monotonic() - t0, children_cpu() - c0


def run(cmd, cwd, env=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(" ".join(cmd) + " failed:\n" + p.stdout[-3000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--quick", action="store_true", help="160x120, to check the script")
    ap.add_argument("--policies", default="default,fixed:64,factoring,seed",
                    help="farm runs: POLICY[:BLOCK],... (default: no --policy, a POV-Ray job's own default)")
    ap.add_argument("--out", default=os.path.join(ROOT, "results"))
    a = ap.parse_args()
    w, h = (160, 120) if a.quick else (a.width, a.height)
    farm = os.path.abspath(a.farm)
    tmp = tempfile.mkdtemp(prefix="bench_povray_")
    shutil.copy(CHESS2, os.path.join(tmp, "chess2.pov"))
    base = ["povray", "+Ichess2.pov", "+FN8", f"+W{w}", f"+H{h}", "+A0.3", "-D", "-V", "-P"]
    rows = []

    def row(part, setting, runs, wall, cpu, note=""):
        rows.append(dict(part=part, image=f"{w}x{h}", setting=setting, runs=runs, wall_s=round(wall, 2),
                         cpu_s=round(cpu, 2), note=note))
        print(rows[-1], flush=True)

    # 1. Grid
    for bs in (4, 8, 16, 32):
        wall, cpu = measured(lambda: run(base + [f"+Ofull{bs}.png", f"+BS{bs}", "+WT2"], tmp))
        row("grid", f"full frame +BS{bs} +WT2", 1, wall, cpu)

    # 2. Regions of 128 (+BS32 +WT1), 2 and 8 at once
    regions = [(x, y, min(128, w - x), min(128, h - y)) for y in range(0, h, 128) for x in range(0, w, 128)]

    def region(r):
        x, y, rw, rh = r
        run(base + [f"+Oreg_{x}_{y}.png", "+BS32", "+WT1", f"+SR{y + 1}", f"+ER{y + rh}", f"+SC{x + 1}",
                    f"+EC{x + rw}"], tmp)

    for at_once in (2, 8):
        def all_regions():
            with ThreadPoolExecutor(at_once) as pool:
                list(pool.map(region, regions))
        wall, cpu = measured(all_regions)
        row("regions", f"{len(regions)} regions of 128, +BS32 +WT1, {at_once} at once", len(regions), wall, cpu)

    # 3. Farm, with povray's own CPU recorded per run
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    log = os.path.join(tmp, "povray_cpu.txt")
    wrapper = os.path.join(bindir, "povray")
    real = shutil.which("povray")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec /usr/bin/time -a -o {log} -f '%U %S' {real} \"$@\"\n")
    os.chmod(wrapper, stat.S_IRWXU)
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"])
    look = ["--width", str(w), "--height", str(h), "--renderer-options", "+A0.3"]
    wall, cpu = measured(lambda: run([farm, "single", "chess2.pov", "-o", "single.png", "--threads", "2"] + look, tmp, env))
    row("farm", "farm single --threads 2 (the farm's default grid, +BS32)", 1, wall, cpu, f"{2 * wall - cpu:.1f} core-s idle")
    single_wall = wall
    for policy in a.policies.split(","):
        name, _, block = policy.partition(":")
        args = ([] if name == "default" else ["--policy", name]) + (["--block", block] if block else [])
        open(log, "w").close()
        wall, cpu = measured(lambda: run([farm, "render", "chess2.pov", "-o", "farm.png", "--workers", "2", "--threads",
                                          "1"] + args + look, tmp, env))
        pov = [tuple(map(float, line.split())) for line in open(log) if line.strip()]
        pov_cpu = sum(u + s for u, s in pov)
        same = open(os.path.join(tmp, "single.png"), "rb").read() == open(os.path.join(tmp, "farm.png"), "rb").read()
        row("farm", "farm render --workers 2 --threads 1 " + (" ".join(args) or "(no --policy)"), len(pov), wall, cpu,
            f"efficiency {single_wall / wall:.3f}; povray {pov_cpu:.1f} CPU-s in {len(pov)} runs, the farm's own "
            f"{cpu - pov_cpu:.1f}, {2 * wall - cpu:.1f} core-s idle; image identical to single: {same}")

    os.makedirs(a.out, exist_ok=True)
    name = "bench_povray_costs" + ("_quick" if a.quick else "")
    with open(os.path.join(a.out, name + ".csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
    with open(os.path.join(a.out, name + ".md"), "w") as f:
        f.write("# Where a POV-Ray job's time goes through the farm\n\n")
        cmd = " ".join(["tools/bench/povray_costs.py"] + (["--quick"] if a.quick else ["--width", str(w), "--height", str(h)]))
        f.write(f"Made by `{cmd}` on "
                f"{datetime.date.today()}, {os.cpu_count()} cores, Debian's chess2.pov +A0.3 "
                "(a shared machine: compare rows of one run).\n\n")
        f.write("| part | image | setting | runs | wall s | CPU s | note |\n|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['part']} | {r['image']} | {r['setting']} | {r['runs']} | {r['wall_s']} | {r['cpu_s']} | "
                    f"{r['note']} |\n")
        f.write("\nCPU = user + system seconds of every process the step ran (children's rusage).\n")
    print("wrote", os.path.join(a.out, name + ".md"))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
