#!/usr/bin/env python3
"""Benchmarks of the farm's own overhead (issue 3), written to results/bench_farm.{csv,md}.

1. Per-block round trip on loopback with a null renderer: one worker, one thread, no prefetch,
   so every block is one Result -> WorkRequest -> Assign exchange.   target <= 100 us
2. Master capacity: 16 null workers with prefetch, blocks/s through one master.
                                                                        target >= 20,000 blocks/s
3. Farm efficiency on the chess scene: single_time / (N * farm_time) for N = 1, 2 workers of one
   thread each (farm_time includes starting the workers and loading the scene).
                                                                        target >= 0.95
Usage: tools/bench/farm_overhead.py [--farm build/farm/farm] [--quick]
"""
import argparse, csv, datetime, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
# master_with_workers: one master job with N local workers (without `journal` the master keeps
# none: these benchmarks measure scheduling; tools/bench/journal_cost.py measures the journal).
from farmtools.local_farm import master_with_workers  # noqa: E402
from farmtools.run_window import accepted_blocks, run_window  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def blocks_and_window(stats):
    """(accepted blocks, render window in seconds: tools/farmtools/run_window.py)."""
    return len(accepted_blocks(stats)), run_window(stats)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    farm = args.farm
    rows = []
    tmp = tempfile.mkdtemp(prefix="farm_bench_")
    scene = os.path.join(ROOT, "scenes/wg6.toml")

    # 1. round trip
    side = 256 if args.quick else 1024
    st = master_with_workers(farm, scene, os.path.join(tmp, "rt.png"), os.path.join(tmp, "rt.json"),
                             ["--width", str(side), "--height", str(side), "--block", "4", "--policy", "fixed",
                              "--max-copies", "1"], 1, ["--threads", "1", "--prefetch", "0", "--null-render"], tmp)
    n, window = blocks_and_window(st)
    rows.append({"benchmark": "round_trip_null_renderer", "value": window / n * 1e6, "unit": "us/block",
                 "target": "<= 100", "detail": f"{n} blocks of 4x4 in {window:.3f} s, 1 worker, 1 thread, prefetch 0"})

    # 2. capacity
    st = master_with_workers(farm, scene, os.path.join(tmp, "cap.png"), os.path.join(tmp, "cap.json"),
                             ["--width", str(side), "--height", str(side), "--block", "4", "--policy", "fixed",
                              "--max-copies", "1"], 16, ["--threads", "1", "--prefetch", "8", "--null-render"], tmp)
    n, window = blocks_and_window(st)
    rows.append({"benchmark": "master_capacity_16_null_workers", "value": n / window, "unit": "blocks/s",
                 "target": ">= 20000", "detail": f"{n} blocks of 4x4 in {window:.3f} s, 16 workers, prefetch 8"})

    # 3. efficiency on the chess scene
    chess = os.path.join(ROOT, "scenes/chess2.toml")
    extra = ["--spp", "8"] if args.quick else []
    t0 = time.monotonic()
    run([farm, "single", chess, "-o", os.path.join(tmp, "single.png"), "--threads", "1"] + extra)
    single = time.monotonic() - t0
    for n_workers in (1, 2):
        t0 = time.monotonic()
        run([farm, "render", chess, "-o", os.path.join(tmp, f"farm{n_workers}.png"), "--workers", str(n_workers),
             "--threads", "1", "--block", "16"] + extra)
        farm_time = time.monotonic() - t0
        eff = single / (n_workers * farm_time)
        rows.append({"benchmark": f"efficiency_chess2_{n_workers}_workers", "value": eff, "unit": "ratio",
                     "target": ">= 0.95",
                     "detail": f"single {single:.2f} s (1 thread), farm {farm_time:.2f} s with {n_workers} x 1 thread"})

    os.makedirs(os.path.join(ROOT, "results"), exist_ok=True)
    cmd = "tools/bench/farm_overhead.py" + (" --quick" if args.quick else "")
    with open(os.path.join(ROOT, "results/bench_farm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["benchmark", "value", "unit", "target", "detail"])
        w.writeheader()
        w.writerows(rows)
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    with open(os.path.join(ROOT, "results/bench_farm.md"), "w") as f:
        f.write(f"# Farm overhead benchmarks\n\nCommand: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"Machine: {os.cpu_count()} cores, {cpu}. Master and workers share these cores.\n\n"
                "| benchmark | value | unit | target | detail |\n|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['benchmark']} | {r['value']:.3f} | {r['unit']} | {r['target']} | {r['detail']} |\n")
    for r in rows:
        print(f"{r['benchmark']:40s} {r['value']:12.3f} {r['unit']:10s} target {r['target']:10s} {r['detail']}")


if __name__ == "__main__":
    sys.exit(main())
