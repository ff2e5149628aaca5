#!/usr/bin/env python3
"""The farm service's figures (issue 40, docs/service.md), each measured side by side in one run:

  overhead    a job through `farm serve` (workers already joined) against `farm render` with the
              same number of workers, same scene: wall time of `farm submit --wait` and of
              `farm render`, and the job's own makespan from its statistics
  preemption  a priority-9 job submitted while a priority-1 job keeps two workers busy: the time
              from its submission until every worker has joined it (from its stats.json), against
              the low job's median block time
  many        N small jobs submitted at once (4 clients in parallel) until all are done: jobs/s,
              and the queue database's share of the service's time (the service logs it)
  listing     `farm jobs` over a database of 10,000 jobs against `farm --version` (the process's
              own start-up), paired medians
  sharing     two users' equal-priority jobs sharing two workers: each one's makespan against the
              same job alone on the two workers, and against a fair share (half the workers)

    python3 tools/bench/service_bench.py --farm build/farm/farm --out results/bench_service.md
"""
import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Farm:
    def __init__(self, farm, tmp):
        self.farm = farm
        self.tmp = tmp
        self.procs = []

    def start(self, args, log):
        p = subprocess.Popen([self.farm] + args, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def serve(self, state, extra=()):
        ep = os.path.join(self.tmp, state + ".ep")
        if os.path.exists(ep):
            os.remove(ep)
        p = self.start(["serve", "--state", os.path.join(self.tmp, state), "--bind", "tcp://127.0.0.1:*",
                        "--endpoint-file", ep, "--heartbeat", "0.5"] + list(extra), os.path.join(self.tmp, state + ".log"))
        for _ in range(200):
            if os.path.exists(ep) and open(ep).read().strip():
                return p, open(ep).read().strip()
            time.sleep(0.05)
        raise RuntimeError("farm serve did not start: " + open(os.path.join(self.tmp, state + ".log")).read())

    def workers(self, ep, n, prefix):
        return [self.start(["worker", "--connect", ep, "--threads", "1", "--name", f"{prefix}{i}",
                            "--cache", os.path.join(self.tmp, "cache")], os.path.join(self.tmp, f"{prefix}{i}.log"))
                for i in range(n)]

    def run(self, args, check=True):
        r = subprocess.run([self.farm] + args, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError(f"farm {' '.join(args)} exited {r.returncode}: {r.stdout}{r.stderr}")
        return r

    def submit(self, ep, scene, out, extra=()):
        r = self.run(["submit", scene, "-o", out, "--server", ep, "--json"] + list(extra))
        return json.loads(r.stdout.splitlines()[0])["id"]

    def job(self, ep, id):
        return json.loads(self.run(["job", str(id), "--server", ep, "--json"]).stdout)

    def stop(self, p):
        p.terminate()
        p.wait(30)

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def timed(fn):
    t = time.monotonic()
    fn()
    return time.monotonic() - t


def event(job, what):
    return next(e["at"] for e in job["history"] if e["what"] == what)


def overhead(f, scene, size, runs):
    walls_render = []
    for i in range(runs):
        out = os.path.join(f.tmp, f"render{i}.png")
        walls_render.append(timed(lambda: f.run(["render", scene, "-o", out, "--workers", "2", "--threads", "1"] + size)))
    service, ep = f.serve("overhead")
    ws = f.workers(ep, 2, "ow")
    f.run(["submit", scene, "-o", "warm.png", "--server", ep, "--wait"] + size)  # the scene in the workers' cache
    walls_service, makespans = [], []
    for i in range(runs):
        out = os.path.join(f.tmp, f"service{i}.png")
        walls_service.append(timed(lambda: f.run(["submit", scene, "-o", out, "--server", ep, "--wait"] + size)))
        j = f.job(ep, i + 2)
        makespans.append(event(j, "done") - event(j, "running"))
    for w in ws:
        w.kill()
    f.stop(service)
    same = all(open(os.path.join(f.tmp, f"render{i}.png"), "rb").read() ==
               open(os.path.join(f.tmp, f"service{i}.png"), "rb").read() for i in range(runs))
    return {"render": statistics.median(walls_render), "service": statistics.median(walls_service),
            "service_makespan": statistics.median(makespans), "identical": same, "runs": runs}


def preemption(f, scene):
    service, ep = f.serve("preempt")
    ws = f.workers(ep, 2, "pw")
    low = f.submit(ep, scene, "low.png", ["--width", "320", "--height", "240", "--spp", "256", "--priority", "1",
                                           "--policy", "fixed", "--block", "32"])
    while f.job(ep, low)["workers"] < 2:
        time.sleep(0.1)
    time.sleep(1.0)
    high = f.submit(ep, scene, "high.png", ["--width", "160", "--height", "120", "--spp", "16", "--priority", "9",
                                             "--policy", "fixed", "--block", "16"])
    f.run(["wait", str(high), "--server", ep])
    f.run(["cancel", str(low), "--server", ep])
    for w in ws:
        w.kill()
    f.stop(service)
    stats = json.load(open(os.path.join(f.tmp, "preempt", "jobs", str(high), "stats.json")))
    first_join = {}
    for w in stats["workers"]:
        first_join[w["name"]] = min(first_join.get(w["name"], 1e9), w["joined"])
    low_blocks = [b for b in json.load(open(os.path.join(f.tmp, "preempt", "jobs", str(low), "stats.json")))["blocks"]] \
        if os.path.exists(os.path.join(f.tmp, "preempt", "jobs", str(low), "stats.json")) else []
    return {"every_worker": max(first_join.values()), "workers": len(first_join), "first_join": first_join,
            "low_block_seconds": None if not low_blocks else statistics.median(b["render_seconds"] for b in low_blocks)}


def low_block_time(f, scene):
    """The low job's blocks (32x32 of 320x240 at 256 spp) rendered alone, for the preemption figure."""
    stats = os.path.join(f.tmp, "lowblocks.json")
    f.run(["render", scene, "-o", os.path.join(f.tmp, "lowblocks.png"), "--width", "320", "--height", "240", "--spp", "256",
           "--policy", "fixed", "--block", "32", "--workers", "2", "--threads", "1", "--stats", stats])
    blocks = json.load(open(stats))["blocks"]
    return statistics.median(b["render_seconds"] for b in blocks), max(b["render_seconds"] for b in blocks)


def many(f, scene, n):
    service, ep = f.serve("many")
    ws = f.workers(ep, 2, "mw")
    t0 = time.monotonic()
    clients = []
    per = (n + 3) // 4
    for c in range(4):
        script = " ; ".join(f"{f.farm} submit {scene} -o m{c}_{i}.png --width 8 --height 6 --spp 1 --policy fixed "
                            f"--server {ep} >/dev/null 2>&1" for i in range(per) if c * per + i < n)
        clients.append(subprocess.Popen(["bash", "-c", script]))
    for c in clients:
        c.wait()
    submitted = time.monotonic() - t0
    while True:
        jobs = json.loads(f.run(["jobs", "--server", ep, "--json"]).stdout)["jobs"]
        if len(jobs) >= n and all(j["state"] == "done" for j in jobs):
            break
        time.sleep(0.5)
    total = time.monotonic() - t0
    for w in ws:
        w.kill()
    f.stop(service)
    log = open(os.path.join(f.tmp, "many.log")).read()
    m = re.search(r"the queue's database took ([0-9.]+) s of the service's ([0-9.]+) s", log)
    db = {"db_seconds": float(m.group(1)), "service_seconds": float(m.group(2))} if m else {}
    return {"jobs": n, "submitted_seconds": submitted, "total_seconds": total, **db}


def listing(f, scene, n, runs):
    service, ep = f.serve("listing")
    f.submit(ep, scene, "one.png", ["--width", "8", "--height", "6", "--spp", "1", "--paused"])
    f.run(["cancel", "1", "--server", ep])
    f.stop(service)
    db = sqlite3.connect(os.path.join(f.tmp, "listing", "queue.sqlite"))
    db.execute("BEGIN")
    for _ in range(n - 1):
        db.execute("INSERT INTO jobs(name, owner, state, priority, spec, submitted, started, finished, progress, reason) "
                   "SELECT name, owner, 'done', priority, spec, submitted, submitted, submitted + 1, 1, '' FROM jobs WHERE id = 1")
    db.execute("INSERT INTO events(job, at, what, who) SELECT id, submitted, 'submitted', owner FROM jobs WHERE id > 1")
    db.commit()
    db.close()
    service, ep = f.serve("listing")
    jobs_t, version_t = [], []
    for _ in range(runs):  # paired, alternating: the machine's load moves both alike
        jobs_t.append(timed(lambda: f.run(["jobs", "--server", ep], check=True)))
        version_t.append(timed(lambda: f.run(["--version"])))
    count = len(json.loads(f.run(["jobs", "--server", ep, "--json"]).stdout)["jobs"])
    f.stop(service)
    return {"jobs_in_database": count, "farm_jobs": statistics.median(jobs_t), "farm_version": statistics.median(version_t),
            "runs": runs}


def sharing(f, scene, size):
    service, ep = f.serve("sharing")
    ws = f.workers(ep, 2, "sw")
    f.run(["submit", scene, "-o", "warm.png", "--server", ep, "--wait"] + size)
    alone = f.submit(ep, scene, "alone.png", size)
    f.run(["wait", str(alone), "--server", ep])
    a = f.submit(ep, scene, "a.png", size + ["--name", "user-a"])
    b = f.submit(ep, scene, "b.png", size + ["--name", "user-b"])
    for id in (a, b):
        f.run(["wait", str(id), "--server", ep])
    ja, jb, jalone = f.job(ep, a), f.job(ep, b), f.job(ep, alone)
    for w in ws:
        w.kill()
    f.stop(service)
    t0 = event(ja, "submitted")
    return {"alone": event(jalone, "done") - event(jalone, "running"),
            "a": event(ja, "done") - t0, "b": event(jb, "done") - t0,
            "a_running": event(ja, "running") - t0, "b_running": event(jb, "running") - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--farm", default=os.path.join(ROOT, "build", "farm", "farm"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "bench_service.md"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--many", type=int, default=1000)
    ap.add_argument("--listing", type=int, default=10000)
    a = ap.parse_args()
    farm = os.path.abspath(a.farm)
    out = os.path.abspath(a.out)  # the runs work in a temporary folder
    scene = os.path.join(ROOT, "scenes", "cornell.toml")
    size = ["--width", "320", "--height", "240", "--spp", "64"]
    tmp = tempfile.mkdtemp(prefix="service_bench_")
    f = Farm(farm, tmp)
    results = {}
    try:
        os.chdir(tmp)
        results["overhead"] = overhead(f, scene, size, a.runs)
        print("overhead", results["overhead"], flush=True)
        results["low_block"] = low_block_time(f, scene)
        results["preemption"] = preemption(f, scene)
        print("preemption", results["preemption"], results["low_block"], flush=True)
        results["sharing"] = sharing(f, scene, size)
        print("sharing", results["sharing"], flush=True)
        results["listing"] = listing(f, scene, a.listing, a.runs * 3)
        print("listing", results["listing"], flush=True)
        results["many"] = many(f, scene, a.many)
        print("many", results["many"], flush=True)
    finally:
        f.close()
        shutil.rmtree(tmp, ignore_errors=True)
    json.dump(results, open(os.path.splitext(out)[0] + ".json", "w"), indent=1)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
