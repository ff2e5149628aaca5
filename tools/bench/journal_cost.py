#!/usr/bin/env python3
"""What the master's journal costs (issue 6), written to results/bench_journal.md.

The worst case for the journal is a master that does nothing but accept tiny blocks: null
workers (black pixels at once) and 4x4 blocks, so every block is one journal record. Three
configurations, measured interleaved (this machine drifts by 10-30% within an hour):
  off      --no-journal
  default  journal with fdatasync every 0.2 s (records are written at once)
  sync     --journal-sync 0: fdatasync after every block
Reported: accepted blocks per second through the master (first assignment to last result),
median of the repetitions, and the ratio to `off`.

Usage: tools/bench/journal_cost.py [--farm build/farm/farm] [--reps 3] [--side 512]
"""
import argparse, datetime, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from bench.farm_overhead import blocks_and_window  # noqa: E402
from farmtools import ROOT  # noqa: E402
from farmtools.local_farm import master_with_workers  # noqa: E402

CONFIGS = [("off", False, []), ("default", True, []), ("sync", True, ["--journal-sync", "0"])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--side", type=int, default=512)
    ap.add_argument("--out", default=os.path.join(ROOT, "results/bench_journal.md"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="farm_journal_bench_")
    scene = os.path.join(ROOT, "scenes/wg6.toml")
    rates = {name: [] for name, _, _ in CONFIGS}
    journal_bytes = 0
    for rep in range(args.reps):
        for name, journal, extra in CONFIGS:
            out = os.path.join(tmp, f"{name}{rep}.png")
            st = master_with_workers(args.farm, scene, out, os.path.join(tmp, f"{name}{rep}.json"),
                                     ["--width", str(args.side), "--height", str(args.side), "--block", "4", "--policy",
                                      "fixed", "--max-copies", "1"] + (["--keep-journal"] if journal else []) + extra,
                                     4, ["--threads", "1", "--prefetch", "8", "--null-render"], tmp, journal=journal)
            n, window = blocks_and_window(st)
            rates[name].append(n / window)
            if journal:
                journal_bytes = os.path.getsize(out + ".journal")
                os.remove(out + ".journal")
            print(f"rep {rep + 1} {name:8s} {n / window:10.0f} blocks/s ({n} blocks in {window:.3f} s)", flush=True)
    base = statistics.median(rates["off"])
    cmd = f"tools/bench/journal_cost.py --reps {args.reps} --side {args.side}"
    with open(args.out, "w") as f:
        f.write("# What the master's journal costs\n\n"
                f"Command: `{cmd}` ({datetime.datetime.now():%Y-%m-%d %H:%M}). wg6 at {args.side}x{args.side} in 4x4 "
                f"blocks ({(args.side // 4) ** 2} blocks, one journal record each), 4 null workers (black pixels at "
                "once, 1 thread, prefetch 8): the master does nothing but accept blocks, the journal's worst case. "
                f"Configurations interleaved, {args.reps} repetitions, median. Journal size for the whole image: "
                f"{journal_bytes / 1e6:.2f} MB ({journal_bytes / (args.side // 4) ** 2:.0f} bytes per 4x4 block "
                "of 48 pixel bytes).\n\n"
                "| journal | blocks/s (median) | runs | vs off |\n|---|---|---|---|\n")
        for name, _, _ in CONFIGS:
            med = statistics.median(rates[name])
            f.write(f"| {name} | {med:.0f} | {', '.join(f'{r:.0f}' for r in rates[name])} | {med / base:.2f} |\n")
        f.write("\n`off`: `--no-journal`; `default`: one `write()` per block, `fdatasync` every 0.2 s; `sync`: "
                "`--journal-sync 0`, `fdatasync` after every block.\n")
    print(open(args.out).read())


if __name__ == "__main__":
    sys.exit(main())
