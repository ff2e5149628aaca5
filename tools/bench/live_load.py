#!/usr/bin/python3
"""Does the live view slow the render? `farm render` of one job with and without `--http`, the
latter with N clients polling it as the page does (/api/status every second, /image.png when a
block was added) and scraping /metrics every 2 s; interleaved
repetitions, medians. Target: < 2% slower at 50 clients. Writes results/bench_live_load.{csv,md} (or --out).

This machine has 2 cores: the render (master and one single-thread worker) is pinned to the
first and the clients to the second, so what is measured is what serving costs the render, not
what the test's own Python clients take from it.

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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402


def poller(base, stop, counts, lock):
    """One client doing what the page does (status every second, the image when blocks were
    added), plus a scrape of /metrics every 2 s."""
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
        stop.wait(1.0)


RENDER_CPUS, CLIENT_CPUS = {0}, {1}


def render(farm, scene, out, size, http, clients, tmp):
    """Seconds from start to exit of one `farm render`, and the requests the clients made."""
    cmd = ["taskset", "-c", ",".join(map(str, sorted(RENDER_CPUS))), farm, "render", scene, "-o", out,
           "--workers", "1", "--threads", "1", "--no-journal", "--policy", "seed"] + size  # as measured
    if http:
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


def runs(rows, config):
    return ", ".join(f"{r['seconds']:.2f}" for r in rows if r["config"] == config)


def median_of(rows, config):
    return statistics.median(r["seconds"] for r in rows if r["config"] == config)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    args = ap.parse_args()
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("live_load: needs two CPUs (the render on one, the clients on the other)")
    os.sched_setaffinity(0, CLIENT_CPUS)  # this process and its client threads
    out_dir = args.out or os.path.join(ROOT, "build/live-load-quick" if args.quick else "results")
    os.makedirs(out_dir, exist_ok=True)
    reps = 1 if args.quick else args.reps
    size = ["--width", "160", "--height", "120", "--spp", "8"] if args.quick else \
        ["--width", "640", "--height", "480", "--spp", "16", "--block", "16"]
    scene = os.path.join(ROOT, "scenes/chess2.toml")
    tmp = tempfile.mkdtemp(prefix="farm_live_load_")
    rows = []
    # Three configurations, interleaved so that drift on this shared machine hits all alike:
    # no live view; the live view with nobody looking (the loop's publishing alone); N clients.
    configs = [("off", False, 0), ("http", True, 0), ("clients", True, args.clients)]
    for rep in range(reps):
        for config, http, clients in configs:
            s, requests, failed = render(args.farm, scene, os.path.join(tmp, "o.png"), size, http, clients, tmp)
            rows.append({"rep": rep + 1, "config": config, "clients": clients, "seconds": s, "requests": requests,
                         "failed": failed})
            print(f"rep {rep + 1} {config:7s}: {s:.2f} s, {requests} requests ({failed} failed)", flush=True)
    with open(os.path.join(out_dir, "bench_live_load.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    base, idle, loaded = (median_of(rows, c) for c in ("off", "http", "clients"))
    pairs = [c["seconds"] / o["seconds"] for o, c in zip(rows[0::3], rows[2::3])]
    req_rate = statistics.median(r["requests"] / r["seconds"] for r in rows if r["clients"])
    failed = sum(r["failed"] for r in rows)
    cmd = "tools/bench/live_load.py" + (" --quick" if args.quick else "") + \
        (f" --clients {args.clients}" if args.clients != 50 else "") + (f" --reps {args.reps}" if args.reps != 5 else "")
    with open(os.path.join(out_dir, "bench_live_load.md"), "w") as f:
        f.write(f"## Live view under load\n\nCommand: `{cmd}`  \nDate: {datetime.datetime.now():%Y-%m-%d %H:%M}  \n"
                f"`taskset -c 0 farm render scenes/chess2.toml {' '.join(size)} --workers 1 --threads 1` "
                "(master, worker and the live view's server on CPU 0; the clients on CPU 1): without "
                f"`--http`, with it and nobody looking, and with it and {args.clients} clients polling as the page "
                f"does; {reps} interleaved repetitions, wall seconds of the whole command.\n\n"
                f"| | median (s) | runs (s) |\n|---|---|---|\n"
                f"| no live view | {base:.2f} | {runs(rows, 'off')} |\n"
                f"| --http, no client | {idle:.2f} | {runs(rows, 'http')} |\n"
                f"| --http, {args.clients} clients | {loaded:.2f} | {runs(rows, 'clients')} |\n\n"
                f"Slowdown with {args.clients} clients: {100 * (loaded / base - 1):+.1f}% of the medians (target < 2%); "
                f"per interleaved pair {', '.join(f'{100 * (p - 1):+.1f}%' for p in pairs)}. With nobody looking: "
                f"{100 * (idle / base - 1):+.1f}%. The clients made {req_rate:.0f} requests/s (median over runs); "
                f"{failed} requests failed in all, each counted when a client's request raised (the server "
                "closes when the job ends, so a client polling then fails once).\n")
    print(f"slowdown {100 * (loaded / base - 1):+.1f}% (medians {base:.2f} s, idle {idle:.2f} s, loaded {loaded:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
