#!/usr/bin/env python3
"""Which pixel transfer is faster: plain or zstd-compressed results, 8-bit (PNG output) and
float (EXR output), on loopback and through the delaying proxy (tools/net/delay_proxy.py)?
One master, one 2-thread worker, the cheap wg6 scene at 800x600 so that transfer matters.
Writes results/bench_pixel_transfer.md. Usage: tools/bench/pixel_transfer.py [--farm PATH] [--reps N]"""
import argparse, os, statistics, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
from farmtools.local_farm import FarmRunError, LocalFarm  # noqa: E402
from farmtools.networks import describe  # noqa: E402
from farmtools.run_window import accepted_blocks, run_window  # noqa: E402


def one_run(farm, ext, compress, proxy_args, tmp):
    stats = os.path.join(tmp, "s.json")
    with LocalFarm(farm) as lf:
        endpoint = lf.master(os.path.join(ROOT, "scenes/wg6.toml"), os.path.join(tmp, "o." + ext), stats,
                             ["--width", "800", "--height", "600", "--block", "32", "--policy", "seed"]
                             + (["--compress"] if compress else ["--no-compress"]))
        if proxy_args is not None:
            endpoint = lf.proxy(endpoint, proxy_args)
        t0 = time.monotonic()
        worker = lf.worker(endpoint, ["--threads", "2", "--cache", os.path.join(tmp, "cache")], log=os.devnull)
        if worker.wait() != 0:
            raise FarmRunError(f"farm worker exited {worker.returncode}")
        elapsed = time.monotonic() - t0
        st = lf.finish(stats, timeout=60)
    return run_window(st), sum(b["bytes"] for b in accepted_blocks(st)), elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="farm_px_")
    links = [("loopback", None), (f"dorm ({describe('dorm')})", ["--preset", "dorm"]),
             ("slow (10 ms, 2 Mbit/s)", ["--delay-ms", "10", "--mbit", "2"])]
    rows = []
    for link, proxy_args in links:
        for ext in ("png", "exr"):
            for compress in (False, True):
                windows = []
                for _ in range(args.reps):
                    window, nbytes, _ = one_run(args.farm, ext, compress, proxy_args, tmp)
                    windows.append(window)
                rows.append((link, "8-bit sRGB" if ext == "png" else "float32", "zstd" if compress else "plain",
                             statistics.median(windows), nbytes))
                print(f"{link:40s} {rows[-1][1]:10s} {rows[-1][2]:5s} {rows[-1][3]:7.3f} s  {nbytes/1e6:7.2f} MB")
    with open(os.path.join(ROOT, "results/bench_pixel_transfer.md"), "w") as f:
        f.write("# Pixel transfer: encoding and compression\n\n"
                f"Command: `tools/bench/pixel_transfer.py --reps {args.reps}` ({time.strftime('%Y-%m-%d %H:%M')}). "
                "wg6 at 800x600, blocks of 32, one master and one 2-thread worker on this 2-core machine; "
                "time = first assignment to last result (median of the repetitions); bytes = result payloads.\n\n"
                "| link | encoding | compression | seconds | MB on the wire |\n|---|---|---|---|---|\n")
        for link, enc, comp, secs, nbytes in rows:
            f.write(f"| {link} | {enc} | {comp} | {secs:.3f} | {nbytes/1e6:.2f} |\n")


if __name__ == "__main__":
    main()
