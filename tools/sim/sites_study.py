#!/usr/bin/env python3
"""Many sites behind relays (docs/relays.md, "Simulated: many sites"): `farm sim`'s sites model
on chess2 at 1920x1080 with the default policy and the preview cost map, for 10 and 100 sites of
10 and 100 workers each, a one-way WAN latency of 10, 50 and 200 ms between each site and the
master and 0.1 ms on each site's LAN. Four layouts of the same workers:

  flat        every worker straight to the master, its latency WAN + LAN (its own 1000 Mbit/s
              link: flat workers do not share their site's uplink here, which favours flat)
  no recall   a relay per site (one participant, 1000 Mbit/s uplink), --no-recall
  recall      the same with the master's supervisor (trigger: a site empty), the default
  below 0.5   the same with --recall-below 0.5 (also a site below half its ideal holding)

Sites differ in speed as seed 002's PC clusters do: site i of S renders at 0.25 + 0.75 i/(S-1)
(every worker of a site alike, one thread, start-up 0.2..2 s). Weak scaling: the job's work is
chosen so that it would take IDEAL_S seconds on all the workers at once (--work-factor); the
honest bound (farm/control/makespan_bound.h) is what `farm sim` prints. One seed. A second
table runs the 10 x 100 case with fixed 8-pixel blocks and no copies (flat, no recall, recall).

  tools/sim/sites_study.py [--farm build/farm/farm] [--out results/sim/sites_study.md] [--jobs 1]
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/: farmtools/__init__.py
from farmtools import ROOT  # noqa: E402
from farmtools.sim_cluster import cluster_text, write_cluster  # noqa: E402

COST_MAP = "results/sim/chess2_640x480_spp8.costmap"
PREVIEW_MAP = "results/sim/chess2_160x120_spp1.costmap"
SIZE = ["--width", "1920", "--height", "1080"]
CONFIGS = ((10, 10), (10, 100), (100, 10), (100, 100))  # sites, workers per site
WAN_MS = (10, 50, 200)
LAN_MS = 0.1
IDEAL_S = 20.0
SEED = 1
LAYOUTS = (("flat", None), ("no recall", ["--no-recall"]), ("recall", []), ("below 0.5", ["--recall-below", "0.5"]))
# A second table: the same 10 x 100 sites under a fixed policy without copies, to tell what the
# default policy does to relays from what relays themselves do.
FIXED_CONFIG = (10, 100)
FIXED_POLICY = ["--policy", "fixed", "--block", "8", "--max-copies", "1"]
PATTERNS = {
    "completed": r"Completed\s+(yes|NO)",
    "makespan": r"Makespan \(master clock\)\s+(\S+) s",
    "work": r"total work (\S+) s",
    "honest": r"Honest bound\s+(\S+) s",
    "messages_in": r"Master messages\s+(\d+) in",
    "messages_out": r"Master messages\s+\d+ in, (\d+) out",
    "recalls": r"(\d+) recalls",
    "moved": r"(\d+) blocks moved",
    "wall": r"Events\s+\d+ in (\S+) s",
}


def site_speed(i, sites):
    return 0.25 + 0.75 * i / (sites - 1)


def cluster(sites, per_site, wan_ms, relays):
    """The cluster file: a [[site]] per site and its group behind it, or the same workers flat."""
    comment = (f"{sites} sites x {per_site} workers, WAN {wan_ms} ms one way, LAN {LAN_MS} ms, "
               + ("a relay per site" if relays else "flat"))
    site_list = [{"name": f"site{i + 1}", "latency_ms": wan_ms, "bandwidth_mbit": 1000} for i in range(sites)]
    groups = [dict({"name": f"s{i + 1}", "count": per_site, "speed": site_speed(i, sites), "startup": (0.2, 2.0),
                    "bandwidth_mbit": 1000},
                   **({"site": f"site{i + 1}", "latency_ms": LAN_MS} if relays else {"latency_ms": wan_ms + LAN_MS}))
              for i in range(sites)]
    return cluster_text(groups, sites=site_list if relays else (), comment=comment)


def run(farm, args):
    cmd = [farm, "sim", "--cost-map", COST_MAP, "--cost-model-map", PREVIEW_MAP, "--seed", str(SEED)] + SIZE + args
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True).stdout
    row = {}
    for key, pattern in PATTERNS.items():
        m = re.search(pattern, out)
        row[key] = m.group(1) if m else None
    if row["makespan"] is None or row["honest"] is None:
        sys.exit("sites_study.py: `farm sim` did not print its makespan and bound:\n" + " ".join(cmd) + "\n" + out)
    for key in ("makespan", "work", "honest", "wall"):
        row[key] = float(row[key]) if row[key] else None
    for key in ("messages_in", "messages_out", "recalls", "moved"):
        row[key] = int(row[key]) if row[key] else 0
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--farm", default=os.path.join(ROOT, "build/farm/farm"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results/sim/sites_study.md"))
    ap.add_argument("--jobs", type=int, default=1, help="simulations at once (default 1)")
    a = ap.parse_args()
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        # The work of the job at --work-factor 1, to size each configuration's job (weak scaling).
        calibration = write_cluster(os.path.join(tmp, "one.toml"), [{"count": 1}])
        base_work = run(a.farm, ["--cluster", calibration])["work"]
        jobs = []
        for sites, per_site in CONFIGS:
            speed = per_site * sum(site_speed(i, sites) for i in range(sites))
            factor = IDEAL_S * speed / base_work
            for wan in WAN_MS:
                for label, extra in LAYOUTS:
                    path = os.path.join(tmp, f"{sites}x{per_site}_{wan}_{'flat' if extra is None else 'sites'}.toml")
                    if not os.path.exists(path):
                        with open(path, "w") as f:
                            f.write(cluster(sites, per_site, wan, extra is not None))
                    args = ["--cluster", path, "--work-factor", f"{factor:.4f}"] + (extra or [])
                    jobs.append(((sites, per_site, wan, label), args))
        sites, per_site = FIXED_CONFIG
        speed = per_site * sum(site_speed(i, sites) for i in range(sites))
        for wan in WAN_MS:
            for label, extra in LAYOUTS[:3]:
                path = os.path.join(tmp, f"{sites}x{per_site}_{wan}_{'flat' if extra is None else 'sites'}.toml")
                args = ["--cluster", path, "--work-factor", f"{IDEAL_S * speed / base_work:.4f}"] + FIXED_POLICY
                jobs.append(((sites, per_site, wan, label + ", fixed"), args + (extra or [])))
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            rows = list(pool.map(lambda j: (j[0], run(a.farm, j[1])), jobs))
    lines = ["# Many sites behind relays (simulated)", "",
             "Command: `tools/sim/sites_study.py" + (f" --jobs {a.jobs}" if a.jobs != 1 else "") + "`  ",
             f"Date: {time.strftime('%Y-%m-%d %H:%M')}", "",
             f"Case: `{COST_MAP}` at 1920x1080, the default policy with the preview map `{PREVIEW_MAP}` "
             f"(`--cost-model-map`), seed {SEED}. Site i of S renders at 0.25 + 0.75 i/(S-1) (one thread a worker, "
             f"start-up 0.2..2 s); each job's work is what the workers would render in {IDEAL_S:g} s all at once. "
             f"WAN one way as listed, LAN {LAN_MS} ms, 1000 Mbit/s links. Flat: every worker straight to the "
             "master with latency WAN + LAN, on its own link (flat workers do not share their site's uplink here). "
             "Sites: a relay per site (`--spare` 4), the master's supervisor off (`--no-recall`), on (trigger: a "
             "site empty) or with `--recall-below 0.5`. Ratio = makespan / honest bound; messages = what the "
             "master handled (in) and sent (out); recalls = Recalls sent / blocks moved.", "",
             "| sites x workers | WAN ms | layout | makespan s | ratio | master messages in / out | recalls / moved |",
             "|---|---|---|---|---|---|---|"]
    for i, ((sites, per_site, wan, label), r) in enumerate(rows):
        if label.endswith(", fixed") and not rows[i - 1][0][3].endswith(", fixed"):
            lines += ["", f"The same {FIXED_CONFIG[0]} x {FIXED_CONFIG[1]} workers with `{' '.join(FIXED_POLICY)}` "
                      "instead of the default policy:", "",
                      "| sites x workers | WAN ms | layout | makespan s | ratio | master messages in / out | recalls / moved |",
                      "|---|---|---|---|---|---|---|"]
        ratio = f"{r['makespan'] / r['honest']:.3f}" if r["completed"] == "yes" and r["honest"] else "did not complete"
        recalls = "-" if label.split(",")[0] in ("flat", "no recall") else f"{r['recalls']} / {r['moved']}"
        lines.append(f"| {sites} x {per_site} | {wan} | {label} | {r['makespan']:.2f} | {ratio} | "
                     f"{r['messages_in']} / {r['messages_out']} | {recalls} |")
    lines += ["", f"{len(rows)} simulations, {time.time() - started:.0f} s wall."]
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
