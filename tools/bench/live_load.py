#!/usr/bin/python3
"""Does the live view slow the render? `farm render` of one job with and without `--http`, the
latter with N clients polling it as the page does (/api/status every 0.5 s, /image.png when a
block was added, /metrics every 2 s), interleaved repetitions, medians. Target: < 2% slower at
50 clients. Writes results/bench_live_load.{csv,md} (or --out).

  tools/bench/live_load.py [--clients 50] [--reps 5] [--quick]
"""
import argparse
import csv
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def poller(base, stop, counts, lock):
    """One client doing what the page does."""
    last_blocks, next_metrics = -1, 0.0
    while not stop.is_set():
        try:
            with urllib.request.urlopen(base + "api/status", timeout=10) as r:
                status = json.loads(r.read())
            n = 1
            if status["blocks_done"] != last_blocks:
                with urllib.request.urlopen(base + "image.png", timeout=10) as r:
                    r.read()
                last_blocks = status["blocks_done"]
                n += 1
            if time.monotonic() >= next_metrics:
                with urllib.request.urlopen(base + "metrics", timeout=10) as r:
                    r.read()
                next_metrics = time.monotonic() + 2.0
                n += 1
            with lock:
                counts[0] += n
        except Exception:  # the server goes away at the end of the job
            with lock:
                counts[1] += 1
        stop.wait(0.5)


def render(farm, scene, out, size, clients, tmp):
    """Seconds from start to exit of one `farm render`, and the requests the clients made."""
    cmd = [farm, "render", scene, "-o", out, "--workers", "2", "--threads", "1", "--no-journal"] + size
    if clients:
        cmd += ["--http", "127.0.0.1:0"]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp)
    stop, lock, counts, threads = threading.Event(), threading.Lock(), [0, 0], []
    for line in p.stdout:
        m = re.search(r"live view: (http://\S+)", line)
        if m and clients:
            for _ in range(clients):
                t = threading.Thread(target=poller, args=(m.group(1), stop, counts, lock), daemon=True)
                t.start()
                threads.append(t)
    p.wait()
    seconds = time.monotonic() - t0
    stop.set()
    for t in threads:
        t.join()
    if p.returncode != 0:
        raise RuntimeError(f"farm render exited {p.returncode}: {' '.join(cmd)}")
    return seconds, counts[0], counts[1]


def runs(rows, clients):
    return ", ".join(f"{r['seconds']:.2f}" for r in rows if r["clients"] == clients)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    out_dir = args.out or os.path.join(ROOT, "build/live-load-quick" if args.quick else "results")
    os.makedirs(out_dir, exist_ok=True)
    reps = 1 if args.quick else args.reps
    size = ["--width", "160", "--height", "120", "--spp", "8"] if args.quick else \
        ["--width", "640", "--height", "480", "--spp", "16", "--block", "16"]
    scene = os.path.join(ROOT, "scenes/chess2.toml")
    tmp = tempfile.mkdtemp(prefix="farm_live_load_")
    rows = []
    for rep in range(reps):
        for clients in (0, args.clients):  # interleaved: drift on this shared machine hits both
            s, requests, failed = render(args.farm, scene, os.path.join(tmp, "o.png"), size, clients, tmp)
            rows.append({"rep": rep + 1, "clients": clients, "seconds": s, "requests": requests, "failed": failed})
            print(f"rep {rep + 1} clients {clients:3d}: {s:.2f} s, {requests} requests ({failed} failed)", flush=True)
    with open(os.path.join(out_dir, "bench_live_load.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    base = statistics.median(r["seconds"] for r in rows if r["clients"] == 0)
    loaded = statistics.median(r["seconds"] for r in rows if r["clients"] == args.clients)
    pairs = [b["seconds"] / a["seconds"] for a, b in zip(rows[0::2], rows[1::2])]
    req_rate = statistics.median(r["requests"] / r["seconds"] for r in rows if r["clients"])
    cmd = "tools/bench/live_load.py" + (" --quick" if args.quick else "") + \
        (f" --clients {args.clients}" if args.clients != 50 else "") + (f" --reps {args.reps}" if args.reps != 5 else "")
    with open(os.path.join(out_dir, "bench_live_load.md"), "w") as f:
        f.write(f"## Live view under load\n\nCommand: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"`farm render scenes/chess2.toml {' '.join(size)} --workers 2 --threads 1` (2 cores), without "
                f"`--http`, and with it and {args.clients} clients polling as the page does; {reps} interleaved "
                "repetitions, wall seconds of the whole command.\n\n"
                f"| | median (s) | runs (s) |\n|---|---|---|\n"
                f"| no live view | {base:.2f} | {runs(rows, 0)} |\n"
                f"| --http, {args.clients} clients | {loaded:.2f} | "
                f"{runs(rows, args.clients)} |\n\n"
                f"Slowdown: {100 * (loaded / base - 1):+.1f}% of the medians (target < 2%); per interleaved pair "
                f"{', '.join(f'{100 * (p - 1):+.1f}%' for p in pairs)}. The clients made {req_rate:.0f} requests/s "
                "(median over runs).\n")
    print(f"slowdown {100 * (loaded / base - 1):+.1f}% (medians {base:.2f} s -> {loaded:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
