"""tools/check_link_order.py: libdraco before libtinygltf, or no libtinygltf, fails; tinygltf
first passes (readelf's answer replaced by a fixed list)."""
import contextlib
import io
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
import check_link_order  # noqa: E402


class CheckLinkOrderTest(unittest.TestCase):
    def check(self, libs):
        saved = check_link_order.needed
        check_link_order.needed = lambda path: libs
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                return check_link_order.main(["farm"]), err.getvalue()
        finally:
            check_link_order.needed = saved

    def test_tinygltf_first_passes(self):
        self.assertEqual(self.check(["libtinygltf.so.2d", "libassimp.so.5", "libdraco.so.7"]), (0, ""))

    def test_without_draco_passes(self):
        self.assertEqual(self.check(["libassimp.so.5", "libtinygltf.so.2d"]), (0, ""))

    def test_draco_before_tinygltf_fails(self):
        rc, err = self.check(["libassimp.so.5", "libdraco.so.7", "libtinygltf.so.2d"])
        self.assertEqual(rc, 1)
        self.assertIn("libdraco comes before libtinygltf", err)

    def test_no_tinygltf_fails(self):
        rc, err = self.check(["libassimp.so.5", "libdraco.so.7"])
        self.assertEqual(rc, 1)
        self.assertIn("libtinygltf is not among its direct dependencies", err)


if __name__ == "__main__":
    unittest.main()
