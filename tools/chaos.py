#!/usr/bin/env python3
"""Long chaos run of the farm: N rounds, each a real master and several workers (some behind
fault-injecting proxies, tools/net/delay_proxy.py) rendering a scene while workers are killed
(SIGKILL), stopped past the liveness limit (SIGSTOP, then SIGCONT), restarted (SIGTERM + a new
process), or all killed at once, and links get delay spikes, resets and stalls. Each round checks
that the image is byte-identical to `farm single` and that the accepted leases in the --stats
JSON tile the image exactly once. Writes results/chaos.md. The CI-sized version of the same is
tests/farm/end_to_end/chaos_faults_test.cpp.

  tools/chaos.py --minutes 8                # rounds until 8 minutes have passed
  tools/chaos.py --rounds 3 --seed 7        # a quick look
  tools/chaos.py --farm build-chaos/farm/farm --out /tmp/chaos.md

Stdlib only. Each round's seed is --seed + round, so a failing round can be rerun alone with
--seed S --rounds 1 (its folder is kept with --keep).
"""
import argparse
import collections
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from farmtools import ROOT  # tools/ is this script's folder: the import root (farmtools/__init__.py)
from farmtools.local_farm import PROXY, endpoint_in

POLICIES = ["fixed", "seed", "adaptive", "factoring"]

# The farm tests' scene; master and `farm single` override its size and spp per round.
with open(os.path.join(ROOT, "tests/farm/data/small_scene.toml")) as _f:
    SCENE = _f.read()

HEARTBEAT, LIVENESS = 0.2, 3  # a worker silent for 0.6 s is dead
ROUND_LIMIT = 240.0           # a round longer than this counts as a hang


def listening(path, timeout):
    """Where the process logging to `path` listens (farmtools.local_farm.endpoint_in: this
    harness restarts masters, so it keeps logs in files rather than using LocalFarm)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path, errors="replace") as f:
                endpoint = endpoint_in(f.read())
            if endpoint:
                return endpoint
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"{path}: no 'listening on' line within {timeout} s")


def spawn(args, log):
    with open(log, "w") as f:
        return subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT)


def tiled_once(stats, width, height):
    """'' if the accepted leases cover every pixel exactly once, else what is wrong."""
    cover = [0] * (width * height)
    accepted = [b for b in stats["blocks"] if b["outcome"] == "accepted"]
    for b in accepted:
        if b["x"] < 0 or b["y"] < 0 or b["x"] + b["width"] > width or b["y"] + b["height"] > height:
            return "accepted block outside the image"
        for y in range(b["y"], b["y"] + b["height"]):
            for x in range(b["x"], b["x"] + b["width"]):
                cover[y * width + x] += 1
    bad = [i for i, c in enumerate(cover) if c != 1]
    if bad:
        i = bad[0]
        return f"{len(bad)} pixels not committed once, e.g. ({i % width}, {i // width}) {cover[i]} times"
    if len(accepted) != stats["blocks_completed"]:
        return "accepted leases != blocks_completed"
    return ""


class Round:
    def __init__(self, args, number, seed, work, references):
        self.args, self.number, self.seed, self.work = args, number, seed, work
        self.rng = random.Random(seed)
        rng = self.rng
        self.width, self.height = rng.choice([(121, 91), (160, 120), (200, 150), (240, 180)])
        self.spp = rng.choice([150, 250, 400])
        self.block = rng.choice([8, 16, 32])
        self.policy = rng.choice(args.policies)
        self.n_workers = rng.choice([4, 5, 6])
        self.faults = collections.Counter()
        self.references = references
        self.log = []

    def note(self, t0, text):
        self.log.append(f"{time.monotonic() - t0:7.2f} s {text}")

    def reference(self, scene):
        key = (self.width, self.height, self.spp)
        if key not in self.references:
            out = os.path.join(self.work, f"single_{self.width}x{self.height}_{self.spp}.png")
            subprocess.run([self.args.farm, "single", scene, "-o", out, "--threads", "2", "--width", str(self.width),
                            "--height", str(self.height), "--spp", str(self.spp)],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.references[key] = out
        return self.references[key]

    def start_master(self, scene, out, stats, log, extra=(), bind="tcp://127.0.0.1:*"):
        """A master on `bind`; a restarted one (resume) must bind the first one's port."""
        m = spawn([self.args.farm, "master", scene, "-o", out, "--bind", bind, "--width", str(self.width), "--height",
                   str(self.height), "--spp", str(self.spp), "--block", str(self.block), "--policy", self.policy,
                   "--heartbeat", str(HEARTBEAT), "--liveness", str(LIVENESS), "--stats", stats, "--keep-journal",
                   "--resume", *extra], log)
        return m, listening(log, 20)

    def run(self):
        rng, d = self.rng, tempfile.mkdtemp(prefix=f"round{self.number}_", dir=self.work)
        scene = os.path.join(d, "scene.toml")
        with open(scene, "w") as f:
            f.write(SCENE)
        ref = self.reference(scene)
        out, stats = os.path.join(d, "farm.png"), os.path.join(d, "stats.json")
        t0 = time.monotonic()
        master, ep = self.start_master(scene, out, stats, os.path.join(d, "master.log"))
        procs = []  # everything to clean up
        proxies = []
        # One calm proxy, two faulty ones with this round's fault rates.
        for i, faults in enumerate([
            ["--delay-ms", "2", "--jitter-ms", "1"],
            ["--delay-ms", "1", "--spike-prob", f"{rng.uniform(0.01, 0.05):.3f}", "--spike-ms", str(rng.choice([200, 500, 900])),
             "--reset-rate", f"{rng.uniform(0.2, 0.8):.2f}", "--stall-rate", f"{rng.uniform(0.1, 0.5):.2f}",
             "--stall-s", f"{rng.uniform(0.8, 2.0):.2f}", "--seed", str(self.seed)],
            ["--mbit", "20", "--reset-rate", f"{rng.uniform(0.1, 0.4):.2f}", "--stall-rate", "0.2", "--stall-s", "0.4",
             "--seed", str(self.seed + 1)],
        ]):
            log = os.path.join(d, f"proxy{i}.log")
            p = spawn([sys.executable, PROXY, "--target", ep.replace("tcp://", "")] + faults, log)
            proxies.append((p, log))
            procs.append(p)
        endpoints = [ep, ep] + ["tcp://" + listening(log, 20) for _, log in proxies]
        slots = []
        for i in range(self.n_workers):
            slots.append({"endpoint": endpoints[i % len(endpoints)], "name": f"w{i}", "gen": 0, "proc": None, "cont": None})

        def launch(s):
            name = f"{s['name']}-{s['gen']}"
            s["gen"] += 1
            s["proc"] = spawn([self.args.farm, "worker", "--connect", s["endpoint"], "--threads", "1", "--once", "--name",
                               name, "--cache", os.path.join(self.work, "cache"), "--give-up-after", "30"],
                              os.path.join(d, name + ".log"))
            s["log"] = os.path.join(d, name + ".log")
            procs.append(s["proc"])

        for s in slots:
            launch(s)
        window = self.args.fault_window
        next_fault = 0.5
        # Half the rounds also kill the master (kill -9) once and restart it with --resume.
        master_kill_at = rng.uniform(1.0, 0.7 * window) if rng.random() < 0.5 else None
        code = None
        while code is None and time.monotonic() - t0 < ROUND_LIMIT:
            t = time.monotonic() - t0
            for s in slots:
                if s["cont"] is not None and t >= s["cont"]:
                    s["proc"].send_signal(signal.SIGCONT)
                    s["cont"] = None
                    self.note(t0, f"SIGCONT {s['name']}")
            if master_kill_at is not None and t >= master_kill_at and master.poll() is None:
                master.kill()
                master.wait()
                master, _ = self.start_master(scene, out, stats, os.path.join(d, "master2.log"), bind=ep)
                self.note(t0, "SIGKILL master, restarted with --resume")
                self.faults["master"] += 1
                master_kill_at = None
            if t >= next_fault and t < window:
                self.inject(t0, t, slots, launch)
                next_fault = t + rng.uniform(0.2, 0.8)
            code = master.poll()
            time.sleep(0.02)
        elapsed = time.monotonic() - t0
        hung = code is None
        if hung:
            master.kill()
            code = master.wait()
        for s in slots:
            if s["cont"] is not None:
                s["proc"].send_signal(signal.SIGCONT)
        # Workers that took part exit on JobDone; a late restart that never joined is stopped.
        deadline = time.monotonic() + 3
        for p in procs:
            if p.poll() is None and p not in [x for x, _ in proxies]:
                try:
                    p.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for p, log in proxies:
            p.terminate()
            p.wait()
            with open(log, errors="replace") as f:
                text = f.read()
            for kind in ("reset", "stall", "spike"):
                self.faults["proxy " + kind] += len(re.findall(r"^fault " + kind, text, re.M))
        with open(os.path.join(d, "faults.log"), "w") as f:
            f.write("\n".join(self.log) + "\n")

        identical = code == 0 and os.path.exists(out) and open(out, "rb").read() == open(ref, "rb").read()
        once, blocks, lost = "no stats", 0, 0
        if code == 0:
            with open(stats) as f:
                js = json.load(f)
            # Every block either master committed is in the journal: the proof across restarts.
            check = subprocess.run([self.args.farm, "journal", out + ".journal", "--complete"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
            once = "" if check.returncode == 0 else check.stdout.strip().splitlines()[-1]
            if not once and not self.faults["master"]:
                once = tiled_once(js, self.width, self.height)
            blocks = js["blocks_completed"]
            lost = sum(1 for b in js["blocks"] if b["outcome"] == "lost")
        ok = code == 0 and identical and once == "" and not hung
        if ok and not self.args.keep:
            shutil.rmtree(d, ignore_errors=True)
        return dict(number=self.number, seed=self.seed, size=f"{self.width}x{self.height}", spp=self.spp, block=self.block,
                    policy=self.policy, workers=self.n_workers, code=code, hung=hung, identical=identical,
                    once=once or "yes", blocks=blocks, lost=lost, seconds=elapsed, faults=dict(self.faults), folder=d,
                    ok=ok)

    def inject(self, t0, t, slots, launch):
        rng = self.rng
        kind = rng.choices(["kill", "stop", "restart", "stop2", "kill_all"], weights=[4, 3, 3, 1, 0.3])[0]
        free = [s for s in slots if s["cont"] is None]
        if not free:
            return
        if kind == "kill_all":
            for s in free:
                s["proc"].kill()
                s["proc"].wait()
            self.note(t0, "SIGKILL every running worker, all restarted")
            for s in free:
                launch(s)
        elif kind in ("stop", "stop2"):
            for s in rng.sample(free, min(len(free), 1 if kind == "stop" else 2)):
                s["proc"].send_signal(signal.SIGSTOP)
                s["cont"] = t + rng.uniform(0.8, 2.5)  # mostly past the 0.6 s liveness limit
                self.note(t0, f"SIGSTOP {s['name']} until {s['cont']:.2f} s")
        else:
            s = rng.choice(free)
            if kind == "kill":
                s["proc"].kill()
                s["proc"].wait()
            else:
                s["proc"].terminate()
                try:
                    s["proc"].wait(5)
                except subprocess.TimeoutExpired:
                    s["proc"].kill()
                    s["proc"].wait()
            self.note(t0, f"{'SIGKILL' if kind == 'kill' else 'SIGTERM'} {s['name']}, restarted")
            launch(s)
        self.faults[kind] += 1


def write_report(path, command, results, started, window):
    total = collections.Counter()
    for r in results:
        total.update(r["faults"])
    n = len(results)
    lines = [
        "# Chaos runs of the farm",
        "",
        f"Command: `{command}` (started {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, "
        f"{(time.time() - started) / 60:.1f} min on this 2-core machine).",
        "",
        "Each round: a master (`--heartbeat 0.2 --liveness 3`; image size, spp, block size and policy drawn per",
        "round), 4-6 one-thread workers: two or three direct, one behind a calm `tools/net/delay_proxy.py` (2 ms),",
        "one or two behind proxies injecting delay spikes, connection resets and stalls. During the first",
        f"{window:.0f} s workers are SIGKILLed, SIGSTOPped for 0.8-2.5 s (mostly past the 0.6 s liveness limit),",
        "restarted (SIGTERM + new process), or all killed at once, every 0.2-0.8 s. In half the rounds the master",
        "itself is killed (SIGKILL) once and restarted with `--resume` on the same port.",
        "A round passes when the master exits 0, the image is byte-identical to `farm single`, and the journal",
        "(`farm journal --complete`) shows every pixel committed exactly once across both masters (without a",
        "master kill, the accepted leases of the `--stats` JSON must also tile the image exactly once).",
        "",
        "| | |",
        "|---|---|",
        f"| rounds | {n} |",
        f"| runs byte-identical to `farm single` | {sum(r['identical'] for r in results)} / {n} |",
        f"| every block committed exactly once | {sum(r['once'] == 'yes' for r in results)} / {n} |",
        f"| master exit code 0 | {sum(r['code'] == 0 for r in results)} / {n} |",
        f"| hangs (round > {ROUND_LIMIT:.0f} s) | {sum(r['hung'] for r in results)} |",
        f"| max / median run time | {max(r['seconds'] for r in results):.1f} s / "
        f"{sorted(r['seconds'] for r in results)[n // 2]:.1f} s |",
        f"| leases lost to faults (re-rendered) | {sum(r['lost'] for r in results)} |",
        "",
        "Faults injected, by kind:",
        "",
        "| kind | count |",
        "|---|---|",
    ]
    names = {"kill": "SIGKILL one worker (restarted)", "stop": "SIGSTOP one worker, SIGCONT later",
             "stop2": "SIGSTOP two workers at once", "restart": "SIGTERM + restart one worker",
             "kill_all": "SIGKILL every worker (all restarted)", "master": "SIGKILL the master, --resume",
             "proxy reset": "proxy: connection reset",
             "proxy stall": "proxy: stall", "proxy spike": "proxy: delay spike"}
    for k in names:
        lines.append(f"| {names[k]} | {total.get(k, 0)} |")
    lines += ["", "| round | seed | size | spp | block | policy | workers | faults | seconds | identical | once | lost |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        f = sum(r["faults"].values())
        lines.append(f"| {r['number']} | {r['seed']} | {r['size']} | {r['spp']} | {r['block']} | {r['policy']} | "
                     f"{r['workers']} | {f} | {r['seconds']:.1f} | {'yes' if r['identical'] else 'NO'} | {r['once']} | "
                     f"{r['lost']} |")
    failed = [r for r in results if not r["ok"]]
    if failed:
        lines += ["", "Failed rounds (folders kept):", ""] + [f"- round {r['number']} (seed {r['seed']}): {r['folder']}" for r in failed]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--rounds", type=int, default=1000, help="at most this many rounds")
    ap.add_argument("--minutes", type=float, default=0, help="start no round after this many minutes (0 = no limit)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fault-window", type=float, default=12.0, help="seconds of each round with faults")
    ap.add_argument("--out", default=os.path.join(ROOT, "results/chaos.md"))
    ap.add_argument("--keep", action="store_true", help="keep every round's folder")
    ap.add_argument("--policies", type=lambda t: [p for p in t.split(",") if p], default=POLICIES,
                    help=f"policies drawn from per round (default {','.join(POLICIES)})")
    args = ap.parse_args()
    if not os.path.exists(args.farm):
        sys.exit(f"no farm binary at {args.farm} (build first, or pass --farm)")
    command = " ".join(["tools/chaos.py"] + sys.argv[1:])
    started = time.time()
    work = tempfile.mkdtemp(prefix="farm_chaos_")
    references, results = {}, []
    for n in range(args.rounds):
        if args.minutes and time.time() - started > args.minutes * 60:
            break
        r = Round(args, n + 1, args.seed + n, work, references).run()
        results.append(r)
        print(f"round {r['number']}: {r['size']} spp {r['spp']} block {r['block']} {r['policy']}, {r['workers']} workers, "
              f"faults {r['faults']}, {r['seconds']:.1f} s, identical {r['identical']}, once {r['once']}", flush=True)
        write_report(args.out, command, results, started, args.fault_window)
    if all(r["ok"] for r in results):
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.out}")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
