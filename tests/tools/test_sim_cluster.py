"""The writer of `farm sim` cluster files (tools/farmtools/sim_cluster.py): the format of
docs/cli.md's example, values as the tools wrote them before (6 significant digits, ranges)."""
import os
import tempfile
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools.sim_cluster import cluster_text, toml_value, write_cluster  # noqa: E402

# A part of docs/cli.md's example cluster file, without its comments.
EXPECTED = """# two groups, one behind a relay
per_block_overhead_ms = 0.15

[network]
latency_ms = 0.1
bandwidth_mbit = 1000

[[site]]
name = "campus"
latency_ms = 50
bandwidth_mbit = 100
spare = 4

[[group]]
name = "wan"
count = 1000
speed = [0.1, 1]
latency_ms = [0, 100]
jitter_ms = 2
join = [0, 30]
fail = [5, 60]

[[group]]
name = "campus-lab"
site = "campus"
count = 50
latency_ms = 0.1
"""


class SimClusterTest(unittest.TestCase):
    def test_the_documented_example(self):
        text = cluster_text(
            [{"name": "wan", "count": 1000, "speed": (0.1, 1.0), "latency_ms": (0, 100), "jitter_ms": 2,
              "join": (0, 30), "fail": (5, 60)},
             {"name": "campus-lab", "site": "campus", "count": 50, "latency_ms": 0.1}],
            sites=[{"name": "campus", "latency_ms": 50, "bandwidth_mbit": 100, "spare": 4}],
            network={"latency_ms": 0.1, "bandwidth_mbit": 1000}, per_block_overhead_ms=0.15,
            comment="two groups, one behind a relay")
        self.assertEqual(text, EXPECTED)

    def test_values(self):
        self.assertEqual(toml_value(1000000), "1000000")         # an int stays an int (count)
        self.assertEqual(toml_value(1 / 3), "0.333333")
        self.assertEqual(toml_value(0.2 * 60), "12")              # 12.000000000000002
        self.assertEqual(toml_value((0.5, 0.5)), "0.5")           # an empty range is a number
        self.assertEqual(toml_value([0.2, 2.0]), "[0.2, 2]")
        self.assertEqual(toml_value('a "b"'), '"a \\"b\\""')
        self.assertEqual(toml_value(True), "true")
        with self.assertRaises(TypeError):
            toml_value((1, 2, 3))

    def test_none_leaves_a_key_out_and_a_group_is_required(self):
        self.assertEqual(cluster_text([{"count": 1, "speed": None}]), "[[group]]\ncount = 1\n")
        with self.assertRaises(ValueError):
            cluster_text([])

    def test_write_cluster(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_cluster(os.path.join(tmp, "c.toml"), [{"name": "one", "count": 1}])
            with open(path) as f:
                self.assertEqual(f.read(), '[[group]]\nname = "one"\ncount = 1\n')


if __name__ == "__main__":
    unittest.main()
