"""The farm-run harness (tools/farmtools/local_farm.py) against a stand-in `farm` (a Python
script), so that it runs without a build: where processes listen (their --endpoint-file), the
stats JSON at the end, a master failing before or after it listens, and every process gone
afterwards."""
import os
import stat
import sys
import tempfile
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools.local_farm import FarmRunError, LocalFarm, endpoint_in, master_with_workers  # noqa: E402

FAKE_FARM = """#!{python}
import json, os, sys, time
args = sys.argv[1:]
def opt(name):
    return args[args.index(name) + 1]
def listening(endpoint):
    # As the farm does: the whole file appears at once (written beside, then renamed). Its log
    # line says another port, so that a harness reading the log would fail the test.
    print("[info] listening on tcp://127.0.0.1:1 (not this)", flush=True)
    with open(opt("--endpoint-file") + ".tmp", "w") as f:
        f.write(endpoint + "\\n")
    os.rename(opt("--endpoint-file") + ".tmp", opt("--endpoint-file"))
if args[0] == "master":
    if "--fail-early" in args:
        print("error: no such scene", flush=True)
        sys.exit(2)
    listening("tcp://127.0.0.1:5555")
    time.sleep(0.2)
    if "--fail-late" in args:
        print("error: the job failed", flush=True)
        sys.exit(1)
    with open(opt("--stats"), "w") as f:
        json.dump({{"makespan_seconds": 0.2, "args": args}}, f)
elif args[0] == "relay":
    listening("tcp://127.0.0.1:6666")
    time.sleep(30)
elif args[0] == "worker":
    print("worker of " + opt("--connect"), flush=True)
"""


class LocalFarmTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.farm = os.path.join(self.tmp.name, "farm")
        with open(self.farm, "w") as f:
            f.write(FAKE_FARM.format(python=sys.executable))
        os.chmod(self.farm, os.stat(self.farm).st_mode | stat.S_IXUSR)
        self.stats = os.path.join(self.tmp.name, "stats.json")

    def tearDown(self):
        self.tmp.cleanup()

    def test_endpoint_in(self):
        self.assertEqual(endpoint_in("[info] master listening on tcp://127.0.0.1:41 (64x64)"), "tcp://127.0.0.1:41")
        self.assertEqual(endpoint_in("listening on 127.0.0.1:9\n"), "127.0.0.1:9")   # the delay proxy's line
        self.assertIsNone(endpoint_in("master starting\n"))

    def test_master_relay_workers_and_the_stats(self):
        with LocalFarm(self.farm) as lf:
            endpoint = lf.master("scene.toml", "out.png", self.stats, ["--width", "64"])
            self.assertEqual(endpoint, "tcp://127.0.0.1:5555")
            self.assertEqual(lf.relay(endpoint, ["--name", "site1"]), "tcp://127.0.0.1:6666")
            log = os.path.join(self.tmp.name, "w1.log")
            lf.worker(endpoint, ["--name", "w1"], log=log)
            st = lf.finish(self.stats, timeout=30)
            procs = list(lf.procs)
        self.assertIn("--no-journal", st["args"])
        self.assertEqual(st["args"][-2:], ["--width", "64"])
        self.assertTrue(all(p.poll() is not None for p in procs))  # the relay was killed on the way out
        with open(log) as f:
            self.assertEqual(f.read(), "worker of tcp://127.0.0.1:5555\n")

    def test_master_with_workers(self):
        st = master_with_workers(self.farm, "scene.toml", "out.png", self.stats, [], 2, ["--threads", "1"],
                                 self.tmp.name, journal=True)
        self.assertNotIn("--no-journal", st["args"])

    def test_a_master_that_fails(self):
        with LocalFarm(self.farm) as lf:
            with self.assertRaisesRegex(FarmRunError, r"(?s)exited \(2\).*no such scene"):
                lf.master("scene.toml", "out.png", self.stats, ["--fail-early"])
        with LocalFarm(self.farm) as lf:
            lf.master("scene.toml", "out.png", self.stats, ["--fail-late"])
            with self.assertRaisesRegex(FarmRunError, r"(?s)failed \(1\).*the job failed"):
                lf.finish(self.stats, timeout=30)


if __name__ == "__main__":
    unittest.main()
