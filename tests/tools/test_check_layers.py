"""tools/check_layers.py: the real tree passes; a planted include into a layer not listed for it
(in renderer/ and in farm/), a listed use no include draws, a folder name in both libraries and a
cycle in the table fail. Runs on a copy of renderer/ and farm/ in a temp folder."""
import contextlib
import io
import os
import shutil
import tempfile
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
import check_layers  # noqa: E402
from farmtools import ROOT  # noqa: E402


class CheckLayersTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="check_layers_")
        for library in ("renderer", "farm"):
            shutil.copytree(os.path.join(ROOT, library), os.path.join(self.tmp, library))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_check(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = check_layers.main(self.tmp)
        return rc, err.getvalue()

    def plant(self, path, text):
        with open(os.path.join(self.tmp, path), "w") as f:
            f.write(text)

    def test_the_tree_passes(self):
        self.assertEqual(self.run_check(), (0, ""))

    def test_an_upward_include_in_the_renderer_fails(self):
        # The scene description sits below the built world: it may not include Embree's scene.
        self.plant("renderer/scene/planted.cpp", '#include "world/scene.h"\n')
        rc, err = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("renderer/scene/planted.cpp:1: includes \"world/scene.h\": layer 'renderer/scene' may not use "
                      "renderer/world (it may use: renderer/math)", err)

    def test_an_include_in_a_subfolder_counts_for_its_layer(self):
        self.plant("renderer/scene/gltf/planted.h", '#include "render/render.h"\n')
        rc, err = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("renderer/scene/gltf/planted.h:1: includes \"render/render.h\": layer 'renderer/scene' may not use "
                      "renderer/render", err)

    def test_an_upward_include_in_the_farm_fails(self):
        self.plant("farm/scheduler/planted.cpp", '#include "master/master.h"\n')
        rc, err = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("farm/scheduler/planted.cpp:1: includes \"master/master.h\": layer 'farm/scheduler' may not use "
                      "farm/master", err)

    def test_the_protocol_may_not_reach_the_built_world(self):
        # The protocol needs scene descriptions only; the built world would pull in Embree.
        self.plant("farm/protocol/planted.cpp", '#include "world/scene.h"\n')
        rc, err = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("layer 'farm/protocol' may not use renderer/world", err)

    def test_a_use_the_table_does_not_list_directly_fails(self):
        # launch may use security, which uses base; the closure is not enough: only direct uses.
        self.plant("farm/launch/planted.cpp", '#include "scheduler/block.h"\n')
        rc, err = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("layer 'farm/launch' may not use farm/scheduler", err)

    def test_a_listed_use_no_include_draws_fails(self):
        saved = check_layers.USES["renderer/mesh"]
        check_layers.USES["renderer/mesh"] = saved + ["renderer/image"]
        try:
            rc, err = self.run_check()
        finally:
            check_layers.USES["renderer/mesh"] = saved
        self.assertEqual(rc, 1)
        self.assertIn("layer 'renderer/mesh' lists 'renderer/image', but none of its files includes it", err)

    def test_a_folder_name_in_both_libraries_fails(self):
        os.makedirs(os.path.join(self.tmp, "farm", "scene"))
        rc, err = self.run_check()
        self.assertEqual(rc, 1)
        self.assertIn("farm/scene/ and renderer/scene/: one folder name in both libraries", err)

    def test_a_cycle_in_the_table_fails(self):
        saved = check_layers.USES["renderer/math"]
        check_layers.USES["renderer/math"] = ["renderer/render"]
        try:
            rc, err = self.run_check()
        finally:
            check_layers.USES["renderer/math"] = saved
        self.assertEqual(rc, 1)
        self.assertIn("layer 'renderer/math' reaches itself through its uses (a cycle)", err)


if __name__ == "__main__":
    unittest.main()
