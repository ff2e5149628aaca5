"""The scale study's pure parts (tools/sim/scale_grid.py): cluster sizes, job sizing, the flat cost
map, and the aggregation of runs to medians, worst cases and the best fixed S0. The expected values
are worked out by hand, so a change in how seeds are combined or which fixed S0 counts as best shows
up here before it shows up in results/sim/scale_study.md."""
import math
import os
import tempfile
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from sim import scale_grid as g  # noqa: E402


def run(policy, seed, makespan, honest=10.0, workers=100, completed=True, cluster="hetero"):
    return dict(map="chess2", cluster=cluster, network="wan", workers=workers, policy=policy, seed=seed,
                makespan_s=makespan, completed=completed, ratio_honest=makespan / honest if completed else None)


class ClusterTest(unittest.TestCase):
    def test_group_counts_round_half_up(self):
        self.assertEqual(g.group_counts(2), (2, 0, 0))
        self.assertEqual(g.group_counts(10), (9, 1, 0))      # 0.5 late rounds up, 0.2 failing down
        self.assertEqual(g.group_counts(100), (93, 5, 2))
        self.assertEqual(g.group_counts(10000), (9300, 500, 200))

    def test_cluster_file_has_no_empty_group(self):
        text = g.cluster_toml(2, "homo", "lan", ideal_s=60)
        self.assertEqual(text.count("[[group]]"), 1)
        text = g.cluster_toml(1000, "hetero", "wan", ideal_s=60)
        self.assertIn("join = [0, 12]", text)       # first 20% of 60 s
        self.assertIn("fail = [6, 54]", text)       # 10%..90% of 60 s
        self.assertIn("speed = [0.1, 1]", text)
        self.assertIn("latency_ms = [0, 100]", text)


class JobSizeTest(unittest.TestCase):
    def test_ideal_length_and_blocks_per_worker(self):
        # 1920x1080 has 60 x 34 = 2040 S0=32 blocks per frame.
        self.assertEqual(g.blocks_per_frame(1920, 1080, 32), 2040)
        for n, frames in ((2, 1), (100, 1), (1000, 5), (10000, 50)):
            for speed in (0.3 * n, 0.55 * n, n):
                f, factor = g.job_size(n, speed, frame_cost=4.0, map_pixels=640 * 480)
                self.assertEqual(f, frames)
                self.assertGreaterEqual(f * 2040 / n, g.BLOCKS_PER_WORKER)
                work = f * 4.0 * (1920 * 1080) / (640 * 480) * factor
                self.assertAlmostEqual(work / speed, g.IDEAL_S)


class FlatMapTest(unittest.TestCase):
    def test_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "flat.costmap")
            with open(path, "w") as f:
                f.write(g.flat_cost_map(width=10, height=6, tile=4, seconds_per_tile=0.5))
            with open(path) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[0], "farm-cost-map 1")
            self.assertEqual(lines[1], "width 10 height 6 tile 4 frames 1")
            self.assertEqual(len(lines), 3 + 2)          # 2 rows of 3 tiles
            self.assertEqual(g.cost_map_summary(path), (10, 6, 3.0))


class CsvTest(unittest.TestCase):
    def test_types_survive_the_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "s.csv")
            with open(path, "w") as f:
                f.write("map,workers,completed,ratio_honest,vs_best_fixed,makespan_s,error\n"
                        "chess2,100,True,1.5,,60,\nflat,2,False,,,1e+03,boom\n")
            a, b = g.read_rows(path)
            self.assertEqual((a["map"], a["workers"], a["completed"], a["ratio_honest"]), ("chess2", 100, True, 1.5))
            self.assertIsNone(a["vs_best_fixed"])
            self.assertIs(b["completed"], False)
            self.assertEqual(b["makespan_s"], 1000.0)
            self.assertEqual(b["error"], "boom")


class AggregationTest(unittest.TestCase):
    def setUp(self):
        # Bound 10 s for every run. fixed-16: 12, 16 (median 14); fixed-32: 11, 18 (median 14.5);
        # factoring: 10.5, 13; adaptive: one run did not complete.
        self.rows = [run("fixed-16", 1, 12), run("fixed-16", 2, 16), run("fixed-32", 1, 11), run("fixed-32", 2, 18),
                     run("factoring", 1, 10.5), run("factoring", 2, 13), run("adaptive", 1, 12),
                     run("adaptive", 2, 99, completed=False)]

    def test_median_and_worst(self):
        s = g.summarise(self.rows, labels=["fixed-16", "fixed-32", "factoring", "adaptive"])
        cells = s[("chess2", "hetero", "wan", 100)]
        self.assertAlmostEqual(cells["fixed-16"]["median"], 1.4)
        self.assertAlmostEqual(cells["fixed-16"]["worst"], 1.6)
        self.assertAlmostEqual(cells["factoring"]["median"], 1.175)

    def test_failed_run_counts_as_infinitely_bad(self):
        cells = g.summarise(self.rows, labels=["adaptive"])[("chess2", "hetero", "wan", 100)]
        self.assertIsNone(cells["adaptive"]["median"])   # median of 1.2 and inf
        self.assertIsNone(cells["adaptive"]["worst"])
        self.assertEqual(cells["adaptive"]["failed"], 1)

    def test_best_fixed_is_lowest_median_not_lowest_single_run(self):
        cells = g.summarise(self.rows, labels=["fixed-16", "fixed-32"])[("chess2", "hetero", "wan", 100)]
        # fixed-32 has the best single run (11) but the worse median (14.5 > 14).
        self.assertEqual(cells[g.BEST_FIXED]["label"], "fixed-16")
        self.assertAlmostEqual(cells[g.BEST_FIXED]["median"], 1.4)

    def test_best_fixed_by_makespan_not_by_ratio(self):
        # fixed-8's bound is higher (it counts the overhead of more blocks): its ratio is lower, its
        # makespan is not.
        rows = [run("fixed-8", 1, 12, honest=12), run("fixed-32", 1, 11, honest=10)]
        self.assertEqual(g.best_fixed(rows)[("chess2", "hetero", "wan", 100)], "fixed-32")
        cells = g.summarise(rows, labels=["fixed-8", "fixed-32"])[("chess2", "hetero", "wan", 100)]
        self.assertAlmostEqual(cells[g.BEST_FIXED]["median"], 1.1)

    def test_vs_best_fixed_uses_the_same_seed(self):
        g.add_vs_best_fixed(self.rows)
        by = {(r["policy"], r["seed"]): r for r in self.rows}
        self.assertAlmostEqual(by[("factoring", 1)]["vs_best_fixed"], 10.5 / 12)
        self.assertAlmostEqual(by[("factoring", 2)]["vs_best_fixed"], 13 / 16)
        self.assertAlmostEqual(by[("fixed-32", 2)]["vs_best_fixed"], 18 / 16)
        self.assertIsNone(by[("adaptive", 2)]["vs_best_fixed"])
        self.assertEqual(by[("adaptive", 1)]["best_fixed_label"], "fixed-16")

    def test_scenarios_do_not_mix(self):
        rows = self.rows + [run("fixed-32", 1, 10.1, cluster="homo"), run("fixed-16", 1, 30, cluster="homo")]
        s = g.summarise(rows, labels=["fixed-16", "fixed-32"])
        self.assertEqual(s[("chess2", "homo", "wan", 100)][g.BEST_FIXED]["label"], "fixed-32")
        self.assertEqual(s[("chess2", "hetero", "wan", 100)][g.BEST_FIXED]["label"], "fixed-16")
        self.assertTrue(math.isclose(s[("chess2", "homo", "wan", 100)]["fixed-32"]["median"], 1.01))


if __name__ == "__main__":
    unittest.main()
