"""The sweep aggregation (tools/farmtools/sweep_data.py) on a small hand-made CSV: the medians,
spreads and best configurations below are worked out by hand from data/sweep_fixture.csv, so a
change in how repetitions are grouped or aggregated shows up here before it shows up, silently,
in a plot or a report table.

The fixture: experiment "latency", fixed blocks 16 and 32 on loopback and 5ms, three or two
repetitions each; one block-32 repetition is written "32.0" (the same setting), one failed run
has no window; plus two null-renderer "rtt" rows that a latency query must not see.
"""
import os
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools import sweep_data as sd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

FIXTURE = os.path.join(HERE, "data", "sweep_fixture.csv")


class SweepAggregationTest(unittest.TestCase):
    def setUp(self):
        self.rows = sd.read_rows(FIXTURE)
        self.latency = sd.select(self.rows, experiment="latency")

    def test_reads_every_row(self):
        self.assertEqual(len(self.rows), 13)
        self.assertEqual(len(self.latency), 11)

    def test_repetitions_group_by_canonical_setting(self):
        groups = sd.group(self.latency, ("network", "block"))
        # "32.0" joins "32": three rows, not a fourth configuration.
        self.assertEqual(sorted(groups), [("5ms", "16"), ("5ms", "32"), ("loopback", "16"), ("loopback", "32")])
        self.assertEqual(len(groups[("loopback", "32")]), 3)

    def test_median_per_configuration(self):
        groups = sd.group(self.latency, ("network", "block"))
        medians = {k: sd.median(v, "window_s") for k, v in groups.items()}
        self.assertEqual(medians, {("loopback", "16"): 2.5,   # 4, 2, 2.5 (a mean would give 2.83)
                                   ("loopback", "32"): 2.0,   # 1.5, 2.5 (even count: mean of the two); failed run left out
                                   ("5ms", "16"): 6.0,        # 5, 9, 6 (a mean would give 6.67)
                                   ("5ms", "32"): 8.5})       # 8, 9

    def test_spread_is_median_min_max(self):
        rows = sd.group(self.latency, ("network", "block"))[("loopback", "16")]
        self.assertEqual(sd.spread(rows, "window_s"), (2.5, 2.0, 4.0))
        self.assertEqual(sd.spread([], "window_s"), (None, None, None))

    def test_best_block_per_network(self):
        best = {}
        for net in ("loopback", "5ms"):
            key, rows, med = sd.best_config([r for r in self.latency if r["network"] == net], ("block",))
            best[net] = (key, len(rows), med)
        self.assertEqual(best, {"loopback": (("32",), 3, 2.0), "5ms": (("16",), 3, 6.0)})

    def test_best_over_all_settings_picks_lowest_median(self):
        key, rows, med = sd.best_config(self.latency)
        self.assertEqual(med, 2.0)
        self.assertEqual({r["run_key"] for r in rows}, {"b1", "b2", "b3"})

    def test_speedup_metric_is_derived_column_is_as_written(self):
        row = self.latency[0]  # single 12 s, window 4 s, speedup cell rounded to 2.99
        self.assertEqual(sd.metric(row, "speedup"), 3.0)
        self.assertEqual(sd.column(row, "speedup"), 2.99)
        self.assertEqual(sd.metric(row, "ideal"), 12.0 / 5.0)

    def test_experiment_rows_filters_mode_and_failed_runs(self):
        rows = sd.experiment_rows(FIXTURE, "latency", "test", need=("window_s",))
        self.assertEqual(len(rows), 10)  # the run without a window is dropped
        rtt = sd.experiment_rows(FIXTURE, "rtt", "test", need=("rtt_us",), modes=("null",))
        self.assertEqual(sd.spread(rtt, "rtt_us"), (120.0, 100.0, 140.0))
        with self.assertRaisesRegex(ValueError, "no rows for experiment 'rtt'"):
            sd.experiment_rows(FIXTURE, "rtt", "test")  # mode farm by default: none
        with self.assertRaisesRegex(ValueError, "does not exist"):
            sd.experiment_rows(FIXTURE + ".missing", "latency", "test")

    def test_varying_settings(self):
        self.assertEqual(sd.varying(self.latency, ("scene", "block", "network", "wait")), ["block", "network"])
        self.assertEqual(sd.policies(self.rows), ["fixed"])


if __name__ == "__main__":
    unittest.main()
