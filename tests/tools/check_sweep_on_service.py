#!/usr/bin/python3
"""Issue 40, item 8: `tools/sweep --server` runs its runs as jobs on a running farm service,
reusing its workers. Starts `farm serve` with two workers, sweeps two block sizes on it and
checks:
- every run is a done job of the service (its `farm jobs --json`), one per sweep point;
- each row names the service as its cluster, the two workers that served it, and an image
  byte-identical to `farm single`'s;
- a second sweep with the same CSV resumes (submits nothing);
- --clusters with --server is refused, saying why.
Every process it starts is gone when it ends (LocalFarm). Run by CTest with --farm."""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tools"))
from farmtools import ROOT  # noqa: E402
from farmtools.local_farm import LocalFarm  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--farm", required=True)
    args = ap.parse_args()
    sweep = [sys.executable, os.path.join(ROOT, "tools", "sweep"), "--farm", args.farm]
    failures = []

    def check(ok, what):
        print(("ok:   " if ok else "FAIL: ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory(prefix="sweep-service-") as tmp, LocalFarm(args.farm) as lf:
        endpoint = lf.service(os.path.join(tmp, "state"))
        for i in (1, 2):
            lf.popen([args.farm, "worker", "--connect", endpoint, "--threads", "1", "--name", f"shared{i}"],
                     log=os.path.join(tmp, f"worker{i}.log"))
        table = os.path.join(tmp, "sweep.csv")
        points = ["--scenes", "chess2", "--res", "96x72", "--spp", "2", "--policies", "fixed", "--blocks", "16,32",
                  "--reps", "1", "--csv", table, "--server", endpoint]
        r = subprocess.run(sweep + points, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
        print(r.stdout[-3000:])
        check(r.returncode == 0, f"the sweep on the service succeeded (exit {r.returncode})")

        listing = subprocess.run([args.farm, "jobs", "--server", endpoint, "--json"], stdout=subprocess.PIPE, text=True,
                                 timeout=60)
        jobs = json.loads(listing.stdout)["jobs"] if listing.returncode == 0 else []
        check(len(jobs) == 2 and all(j["state"] == "done" for j in jobs),
              f"two done jobs on the service, one per point: {[(j['id'], j['state']) for j in jobs]}")

        with open(table, newline="") as f:
            rows = [row for row in csv.DictReader(f) if row["mode"] == "farm"]
        check(len(rows) == 2, f"two farm rows in the CSV ({len(rows)})")
        for row in rows:
            check(row["cluster"] == "service" and row["network"] == "service",
                  f"{row['run_key']}: cluster and network read 'service' ({row['cluster']}, {row['network']})")
            check(row["workers"] == "2" and row["speeds"] == "1 1",
                  f"{row['run_key']}: served by the two one-thread workers (workers {row['workers']}, speeds {row['speeds']})")
            check(row["identical"] == "1", f"{row['run_key']}: its image is byte-identical to farm single's")
            check(float(row["window_s"]) > 0 and int(row["blocks"]) > 0,
                  f"{row['run_key']}: a window ({row['window_s']} s) and blocks ({row['blocks']}) from the job's stats")

        again = subprocess.run(sweep + points, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        listing = subprocess.run([args.farm, "jobs", "--server", endpoint, "--json"], stdout=subprocess.PIPE, text=True,
                                 timeout=60)
        check(again.returncode == 0 and "0 new rows" in again.stdout and len(json.loads(listing.stdout)["jobs"]) == 2,
              "a second sweep with the same CSV resumes: no new row, no new job")

        refused = subprocess.run(sweep + points + ["--clusters", "paper6"], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True, timeout=60)
        check(refused.returncode == 2 and "--clusters" in refused.stdout and "does not apply" in refused.stdout,
              f"--clusters with --server is refused, saying why: {refused.stdout.strip().splitlines()[-1:]}")
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
