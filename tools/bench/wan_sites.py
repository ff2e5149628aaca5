#!/usr/bin/env python3
"""Sites joined by a WAN: every worker to the master through its site's link (flat) against one
`farm relay` per site (only the relay crosses the link). Real processes on this machine: the
master at the head site, each remote site behind its own delaying proxy (tools/net/delay_proxy.py
--shared-link: one uplink per site, whatever crosses it shares its bandwidth), its workers each
capped at --cores of CPU (cgroup quotas, so the sites stay the same size on a 2-core machine).

Measured per run: the wall time from starting the sites to the master's exit (scene fetch and
start-up included), the master's own makespan, and the messages the master read and sent per
second (its stats' messages_in/out); the image is compared byte for byte with `farm single`'s.
Writes a Markdown table (--out). With --require-relays-ahead MS, exits 1 unless the relays'
median wall time at that delay is below flat's (the CTest emulated-WAN test uses this).

  tools/bench/wan_sites.py                      # 2 sites x 3 workers, 40 and 100 ms, 20 Mbit/s
  tools/bench/wan_sites.py --delays 100 --reps 1 --width 320 --height 240 --spp 8 --no-quota
  tools/bench/wan_sites.py --texture-mb 6 ...   # a generated scene with a 6 MB texture instead

--texture-mb: real scenes bring textures and meshes; flat, every worker fetches them over its
site's link, through a relay the site fetches them once. The generated scene (a textured floor
under a glass ball) makes that part of the comparison.
"""
import argparse
import random
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
from farmtools.local_farm import LocalFarm, read_stats  # noqa: E402
from experiments.cpu_quota import CpuQuota, QuotaUnavailable, check_available  # noqa: E402


def textured_scene(folder, megabytes):
    """A floor with a noise texture of about `megabytes` MB (binary PPM: incompressible, so the
    link carries all of it) under a glass ball; returns the scene file's path."""
    os.makedirs(folder, exist_ok=True)
    side = max(16, int((megabytes * 1e6 / 3) ** 0.5))
    with open(os.path.join(folder, "noise.ppm"), "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (side, side))
        f.write(random.Random(1).randbytes(side * side * 3))
    path = os.path.join(folder, "textured.toml")
    with open(path, "w") as f:
        f.write("""[render]
width = 320
height = 240
spp = 16
integrator = "whitted"
max_depth = 6

[camera]
position = [0, 1.5, 5]
look_at = [0, 0.6, 0]
fov = 45

[environment]
color = [0.6, 0.7, 0.9]

[[texture]]
name = "noise"
type = "image"
path = "noise.ppm"
scale = 4

[[material]]
name = "floor"
type = "diffuse"
albedo = "noise"

[[material]]
name = "glass"
type = "glass"
ior = 1.5

[[light]]
type = "point"
position = [3, 5, 3]
intensity = 60

[[object]]
type = "plane"
material = "floor"
size = 20

[[object]]
type = "sphere"
material = "glass"
center = [0, 0.8, 0]
radius = 0.8
""")
    return path


class Run:
    """One job: master, a proxy per site, then per site either its workers (flat) or a relay
    and its workers; every process is killed on the way out."""

    def __init__(self, args, tmp, mode, delay_ms, rep):
        self.a, self.mode, self.delay = args, mode, delay_ms
        self.dir = os.path.join(tmp, f"{mode}-{delay_ms:g}ms-{rep}")
        os.makedirs(self.dir)
        self.quotas = []

    def quota(self, name):
        if self.a.no_quota:
            return None
        q = CpuQuota(f"wan-{name}", self.a.cores)
        q.__enter__()
        self.quotas.append(q)
        return q

    def worker(self, lf, connect, name):
        cache = os.path.join(self.dir, "cache-" + name)  # each worker its own machine
        quota = self.quota(name)
        return lf.worker(connect, ["--threads", "1", "--cache", cache, "--name", name, "--give-up-after", "60"],
                         log=os.path.join(self.dir, name + ".log"), preexec_fn=quota.enter if quota else None)

    def go(self):
        a = self.a
        out, stats = os.path.join(self.dir, "out.png"), os.path.join(self.dir, "stats.json")
        try:
            with LocalFarm(a.farm) as lf:  # every process is killed on the way out
                endpoint = lf.master(a.scene, out, stats, a.job_args)
                t0 = time.monotonic()
                for s in range(a.sites):
                    uplink = lf.proxy(endpoint, ["--delay-ms", f"{self.delay:g}", "--mbit", f"{a.mbit:g}", "--shared-link"])
                    if self.mode == "flat":
                        for w in range(a.workers):
                            self.worker(lf, uplink, f"s{s + 1}w{w + 1}")
                    else:
                        site = lf.relay(uplink, ["--threads", str(a.workers), "--cache",
                                                 os.path.join(self.dir, f"relay{s + 1}"), "--name", f"site{s + 1}"])
                        for w in range(a.workers):
                            self.worker(lf, site, f"s{s + 1}w{w + 1}")
                lf.wait_master(a.timeout)
                wall = time.monotonic() - t0
            st = read_stats(stats)
            with open(out, "rb") as f:
                image = f.read()
            messages = st["messages_in"] + st["messages_out"]
            return dict(wall=wall, makespan=st["makespan_seconds"], messages=messages,
                        rate=messages / st["makespan_seconds"], participants=len(st["workers"]), image=image)
        finally:
            for q in self.quotas:
                q.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--scene", default=os.path.join(ROOT, "scenes/chess2.toml"))
    ap.add_argument("--width", type=int, default=800)
    ap.add_argument("--height", type=int, default=600)
    ap.add_argument("--spp", type=int, default=64)
    ap.add_argument("--texture-mb", type=float, default=0,
                    help="render a generated scene with a texture of this many MB instead of --scene")
    ap.add_argument("--job", default="", help="more `farm master` options, e.g. '--policy seed'")
    ap.add_argument("--sites", type=int, default=2)
    ap.add_argument("--workers", type=int, default=3, help="workers per site (one thread each)")
    ap.add_argument("--cores", type=float, default=0.25, help="CPU quota per worker")
    ap.add_argument("--no-quota", action="store_true", help="workers share the machine's cores freely")
    ap.add_argument("--delays", default="40,100", help="one-way WAN delays in ms, comma-separated")
    ap.add_argument("--mbit", type=float, default=20.0, help="each site's uplink, per direction")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", help="Markdown table to write (default: print only)")
    ap.add_argument("--require-relays-ahead", type=float, metavar="MS",
                    help="exit 1 unless relays beat flat (median wall time) at this delay")
    a = ap.parse_args()
    a.delays = [float(d) for d in a.delays.split(",")]
    tmp = tempfile.mkdtemp(prefix="farm_wan_")
    if a.texture_mb > 0:
        a.scene = textured_scene(os.path.join(tmp, "scene"), a.texture_mb)
    a.job_args = ["--width", str(a.width), "--height", str(a.height), "--spp", str(a.spp)] + shlex.split(a.job)
    if not a.no_quota:
        try:
            check_available()
        except QuotaUnavailable as e:
            print(f"wan_sites: no CPU quotas here ({e}); pass --no-quota", file=sys.stderr)
            return 2
    reference = os.path.join(tmp, "single.png")
    subprocess.run([a.farm, "single", a.scene, "-o", reference, "--threads", "2"] + a.job_args, check=True,
                   stdout=subprocess.DEVNULL)
    with open(reference, "rb") as f:
        single = f.read()
    rows, walls, rejoins = [], {}, []
    for delay in a.delays:
        for rep in range(a.reps):
            for mode in ("flat", "relays"):  # side by side, alternating: drift hits both
                r = Run(a, tmp, mode, delay, rep).go()
                same = r["image"] == single
                # A participant that joined twice reconnected mid-job (e.g. gave up on a slow
                # download): the comparison would measure that, so it is flagged.
                r["rejoins"] = r["participants"] - (a.sites * a.workers if mode == "flat" else a.sites)
                rejoins.append(r["rejoins"])
                walls.setdefault((delay, mode), []).append(r["wall"])
                rows.append((delay, mode, rep + 1, r, same))
                print(f"wan_sites: {delay:g} ms {mode} #{rep + 1}: wall {r['wall']:.2f} s, master {r['makespan']:.2f} s, "
                      f"{r['messages']} messages ({r['rate']:.1f}/s), {r['participants']} participants "
                      f"({r['rejoins']} rejoined), "
                      f"image {'== single' if same else 'DIFFERS from single'}", flush=True)
                if not same:
                    print(f"wan_sites: the image differs from farm single's (kept in {tmp})", file=sys.stderr)
                    return 1
    quota = "no CPU quota" if a.no_quota else f"{a.cores:g} core each"
    scene_name = (f"a generated floor with a {a.texture_mb:g} MB texture (--texture-mb)" if a.texture_mb > 0
                  else os.path.relpath(a.scene, ROOT))
    lines = ["# Relays against a flat farm over an emulated WAN", "",
             f"Command: `tools/bench/wan_sites.py {' '.join(shlex.quote(x) for x in sys.argv[1:])}`  ",
             f"Date: {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC. {a.sites} remote sites x {a.workers} workers "
             f"(1 thread, {quota}); each site's uplink {a.mbit:g} Mbit/s per direction, shared, with the one-way delay "
             f"below (tools/net/delay_proxy.py --shared-link); the master at the head site. Scene "
             f"{scene_name} at {a.width}x{a.height}, {a.spp} spp, `farm master` options "
             f"`{' '.join(a.job_args)}`. Wall = first site started to the master's exit (scene fetch included); "
             f"messages = what the master read and sent. Every image byte-identical to `farm single`'s.", "",
             "| one-way delay | layout | run | wall (s) | master makespan (s) | master messages | messages/s | participants |",
             "|---|---|---|---|---|---|---|---|"]
    for delay, mode, rep, r, _ in rows:
        lines.append(f"| {delay:g} ms | {mode} | {rep} | {r['wall']:.2f} | {r['makespan']:.2f} | {r['messages']} | "
                     f"{r['rate']:.1f} | {r['participants']} |")
    lines += ["", "| one-way delay | flat median wall (s) | relays median wall (s) | relays / flat |", "|---|---|---|---|"]
    for delay in a.delays:
        f, r = statistics.median(walls[(delay, "flat")]), statistics.median(walls[(delay, "relays")])
        lines.append(f"| {delay:g} ms | {f:.2f} | {r:.2f} | {r / f:.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.require_relays_ahead is not None:
        d = a.require_relays_ahead
        if (d, "flat") not in walls:
            print(f"wan_sites: {d:g} ms was not measured", file=sys.stderr)
            return 2
        f, r = statistics.median(walls[(d, "flat")]), statistics.median(walls[(d, "relays")])
        if any(rejoins):
            print(f"wan_sites: a participant joined twice in some run (rejoins {rejoins})", file=sys.stderr)
            return 1
        if not r < f:
            print(f"wan_sites: relays are not ahead of flat at {d:g} ms ({r:.2f} s against {f:.2f} s)", file=sys.stderr)
            return 1
        print(f"wan_sites: relays ahead of flat at {d:g} ms: {r:.2f} s against {f:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
