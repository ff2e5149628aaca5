"""farmtools.bounds: the hand-solved cases of tests/farm/control/makespan_bound_test.cpp, so the Python
and C++ bounds cannot drift apart."""
import math
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools import bounds  # noqa: E402
from farmtools.bounds import Worker as W  # noqa: E402


class BoundsTest(unittest.TestCase):
    def test_equal_workers_meet_the_plain_bound(self):
        ws = [W(0, 1), W(0, 1), W(0, 2)]
        self.assertAlmostEqual(bounds.plain(ws, 40), 10)
        self.assertAlmostEqual(bounds.honest(ws, 40), 10)

    def test_a_late_joiner_helps_only_from_its_start(self):
        self.assertAlmostEqual(bounds.fluid([W(0, 1), W(10, 1)], 30), 20)
        self.assertAlmostEqual(bounds.plain([W(0, 1), W(10, 1)], 30), 15)
        self.assertAlmostEqual(bounds.fluid([W(0, 1), W(10, 1)], 8), 8)

    def test_delays_failures_and_a_cluster_that_cannot_finish(self):
        self.assertAlmostEqual(bounds.fluid([W(0, 1, delay=1.0)], 5), 6)
        self.assertAlmostEqual(bounds.fluid([W(0, 1, end=5), W(0, 1)], 12), 7)
        self.assertTrue(math.isinf(bounds.fluid([W(0, 1, end=5), W(2, 1, end=4)], 8)))
        self.assertTrue(math.isinf(bounds.honest([], 1)))

    def test_costliest_block_on_the_worker_that_ends_it_first(self):
        self.assertAlmostEqual(bounds.indivisible([W(0, 1), W(3, 2)], 4), 4)
        self.assertAlmostEqual(bounds.indivisible([W(0, 1, end=3), W(3, 2)], 4), 5)
        self.assertAlmostEqual(bounds.honest([W(0, 1), W(3, 2)], 1, 4), 4)


if __name__ == "__main__":
    unittest.main()


class SweepSummaryTest(unittest.TestCase):
    """sweep.summarise: the honest bound counts a worker from its first lease, not its join."""

    def test_honest_bound_of_a_run(self):
        from experiments import sweep

        def block(worker, assigned, received, seconds, side=8):
            return {"worker": worker, "assigned": assigned, "received": received, "render_seconds": seconds,
                    "width": side, "height": side, "outcome": "accepted"}
        # Two speed-1 workers; n2 joined at 0 but got its first block only at 4 s (its scene load).
        st = {"min_block": 4, "makespan_seconds": 12, "reassignments": 0, "late_results": 0, "decisions": [],
              "workers": [{"id": 1, "name": "n1-x1-loopback", "joined": 0, "left": -1, "threads": 1, "busy_seconds": 8,
                           "bytes_in": 0, "bytes_out": 0},
                          {"id": 2, "name": "n2-x1-loopback", "joined": 0, "left": -1, "threads": 1, "busy_seconds": 4,
                           "bytes_in": 0, "bytes_out": 0}],
              "blocks": [block(1, 0, 8, 8), block(2, 4, 8, 4)]}
        row = sweep.summarise(st, 12.0, [1.0, 1.0], None, 1)
        # T + (T - 4) = 12 -> T = 8; the plain bound says 6, the join bound 6 too.
        self.assertAlmostEqual(row["honest_bound_s"], 8)
        self.assertAlmostEqual(row["lower_bound_join_s"], 8)  # never below the longest block (8 s)
        self.assertAlmostEqual(row["window_s"], 8)
