"""tools/check_layers.py: the real tree passes; a planted include into a layer not listed for it,
and a cycle in the table, fail. Runs on a copy of farm/ (renderer/ beside it) in a temp folder."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools"))
import check_layers  # noqa: E402


def run(farm_dir):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = check_layers.main(farm_dir)
    return rc, err.getvalue()


class CheckLayersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="check_layers_")
        shutil.copytree(os.path.join(ROOT, "farm"), os.path.join(self.tmp, "farm"))
        os.makedirs(os.path.join(self.tmp, "renderer"))
        for name in os.listdir(os.path.join(ROOT, "renderer")):
            if os.path.isdir(os.path.join(ROOT, "renderer", name)):
                os.makedirs(os.path.join(self.tmp, "renderer", name))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_the_tree_passes(self):
        self.assertEqual(run(os.path.join(self.tmp, "farm")), (0, ""))

    def test_an_include_into_a_layer_not_listed_fails(self):
        # The scheduler is below the master: a planted upward include is refused, named.
        with open(os.path.join(self.tmp, "farm", "scheduler", "planted.cpp"), "w") as f:
            f.write('#include "master/master.h"\n')
        rc, err = run(os.path.join(self.tmp, "farm"))
        self.assertEqual(rc, 1)
        self.assertIn("farm/scheduler/planted.cpp:1: includes \"master/master.h\": layer 'scheduler' may not use master",
                      err)

    def test_a_use_the_table_does_not_list_directly_fails(self):
        # launch may use security, which uses base; the closure is not enough: only direct uses.
        with open(os.path.join(self.tmp, "farm", "launch", "planted.cpp"), "w") as f:
            f.write('#include "scheduler/block.h"\n')
        rc, err = run(os.path.join(self.tmp, "farm"))
        self.assertEqual(rc, 1)
        self.assertIn("layer 'launch' may not use scheduler", err)

    def test_a_cycle_in_the_table_fails(self):
        saved = check_layers.USES["base"]
        check_layers.USES["base"] = ["scheduler"]
        try:
            rc, err = run(os.path.join(self.tmp, "farm"))
        finally:
            check_layers.USES["base"] = saved
        self.assertEqual(rc, 1)
        self.assertIn("layer 'base' reaches itself through its uses (a cycle)", err)


if __name__ == "__main__":
    unittest.main()
