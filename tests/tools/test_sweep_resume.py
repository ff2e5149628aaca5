"""Sweep resumes from its CSV: today's header loads the rows as they are, an earlier version's
(a prefix of the columns) is upgraded in place, anything else is refused."""
import csv
import os
import shutil
import tempfile
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from experiments.sweep import COLUMNS, Sweep  # noqa: E402


class SweepResumeTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.csv = os.path.join(self.dir, "s.csv")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, columns, run_key="k1"):
        with open(self.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(columns)
            w.writerow([run_key if c == "run_key" else "" for c in columns])

    def test_a_current_csv_is_resumed_as_it_is(self):
        self.write(COLUMNS)
        before = open(self.csv).read()
        s = Sweep(self.csv, None, self.dir, {})
        self.assertEqual(list(s.rows), ["k1"])
        self.assertEqual(open(self.csv).read(), before)

    def test_an_earlier_version_is_upgraded(self):
        self.write(COLUMNS[:-1])
        s = Sweep(self.csv, None, self.dir, {})
        self.assertEqual(list(s.rows), ["k1"])
        with open(self.csv, newline="") as f:
            self.assertEqual(next(csv.reader(f)), COLUMNS)

    def test_other_columns_are_refused(self):
        self.write(["run_key", "something"])
        with self.assertRaises(SystemExit):
            Sweep(self.csv, None, self.dir, {})


if __name__ == "__main__":
    unittest.main()
