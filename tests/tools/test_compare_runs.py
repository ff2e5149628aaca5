"""farmtools.cost_map (a block's cost as CostMap::cost computes it) and tools/sim/compare_runs.py
(per-worker figures of a stats JSON), on hand-made inputs."""
import os
import tempfile
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools.cost_map import CostMap  # noqa: E402
from sim import compare_runs  # noqa: E402

# 6x4 image, 4-pixel tiles: 2 columns (4 and 2 pixels wide) x 1 row; 2 frames.
MAP = "farm-cost-map 1\nwidth 6 height 4 tile 4 frames 2\nnote test\n1.6 0.8\n2 2\n"


def lease(worker, assigned, received, render, x=0, w=4, outcome="accepted", queued=0.0):
    return {"frame": 1, "x": x, "y": 0, "width": w, "height": 4, "worker": worker, "assigned": assigned,
            "received": received, "render_seconds": render, "queued_seconds": queued, "outcome": outcome}


class CostMapTest(unittest.TestCase):
    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".costmap")
        with os.fdopen(fd, "w") as f:
            f.write(MAP)
        self.map = CostMap.read(self.path)

    def tearDown(self):
        os.remove(self.path)

    def test_whole_tiles_and_partial_overlaps(self):
        self.assertAlmostEqual(self.map.cost(1, 0, 0, 6, 4), 2.4)
        self.assertAlmostEqual(self.map.cost(1, 0, 0, 2, 4), 0.8)   # half of the first tile
        self.assertAlmostEqual(self.map.cost(1, 3, 0, 2, 2), 0.2 + 0.2)  # 2 of 16 pixels, 2 of 8
        self.assertAlmostEqual(self.map.cost(2, 4, 0, 2, 4), 2)     # the clipped 2-pixel-wide tile
        self.assertAlmostEqual(self.map.cost(5, 0, 0, 6, 4), 4)     # frames past the map use its last
        self.assertAlmostEqual(self.map.total(), 6.4)

    def test_a_short_file_names_where_it_ends(self):
        with open(self.path, "w") as f:
            f.write(MAP.rsplit("\n", 2)[0] + "\n")
        with self.assertRaisesRegex(ValueError, "frame 2 row 1"):
            CostMap.read(self.path)


class CompareRunsTest(unittest.TestCase):
    def test_busy_union_merges_overlapping_leases(self):
        self.assertAlmostEqual(compare_runs.busy_union([(0, 2), (1, 3), (5, 6), (5.5, 5.7)]), 4)

    def test_per_worker_figures(self):
        stats = {"workers": [{"id": 2, "name": "b", "joined": 1.5}, {"id": 1, "name": "a", "joined": 1.0}],
                 "blocks": [lease(1, 1.0, 2.0, 0.8), lease(1, 3.0, 3.5, 0.4, x=4, w=2, queued=0.05),
                            lease(2, 2.0, 4.0, 1.5, outcome="late"), lease(2, 4.5, -1, 0, outcome="cancelled")]}
        run, workers = compare_runs.summarise(stats)
        self.assertAlmostEqual(run["window"], 2.5)  # first assignment 1.0 -> last accepted 3.5
        a, b = workers
        self.assertEqual((a["name"], a["leases"], b["leases"]), ("a", 2, 2))
        self.assertAlmostEqual(a["render"], 1.2)
        self.assertAlmostEqual(a["overhead_sum"], 0.2 + 0.05)
        self.assertAlmostEqual(a["idle"], 1.0)  # between 2.0 and 3.0
        self.assertAlmostEqual(b["last_received"], 3.0)  # its unanswered lease does not count

    def test_report_pairs_workers_in_id_order(self):
        stats = {"workers": [{"id": 1, "name": "a", "joined": 0}],
                 "blocks": [lease(1, 0.0, 2.0, 1.0)]}
        slow = {"workers": [{"id": 1, "name": "w1", "joined": 0}], "blocks": [lease(1, 0.0, 2.2, 1.0)]}
        text = compare_runs.report(stats, slow)
        self.assertIn("(+10.0%)", text)
        self.assertIn("| a | real |", text)
        self.assertIn("| w1 | sim |", text)


if __name__ == "__main__":
    unittest.main()
