"""The render window (tools/farmtools/run_window.py): first assignment of any lease to the last
accepted result, the simulator's definition (farm/sim/simulator.h, SimResult::window())."""
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools.run_window import accepted_blocks, run_window, window_bounds  # noqa: E402


def lease(assigned, received, outcome="accepted"):
    return {"worker": 1, "assigned": assigned, "received": received, "outcome": outcome}


class RunWindowTest(unittest.TestCase):
    def test_first_assignment_of_any_lease_to_last_accepted_result(self):
        # The first lease went to a worker that died (never received); a late copy came back after
        # the last accepted result. Neither accepted, yet the first one opens the window.
        stats = {"blocks": [lease(0.5, -1, "cancelled"), lease(1.0, 2.0), lease(1.5, 3.5),
                            lease(2.5, 4.0, "late")]}
        self.assertEqual(window_bounds(stats), (0.5, 3.5))
        self.assertAlmostEqual(run_window(stats), 3.0)
        self.assertEqual(len(accepted_blocks(stats)), 2)

    def test_all_accepted(self):
        self.assertAlmostEqual(run_window({"blocks": [lease(2.0, 2.5), lease(2.1, 3.0)]}), 1.0)

    def test_no_accepted_block_has_no_window(self):
        with self.assertRaisesRegex(ValueError, "no accepted block"):
            run_window({"blocks": [lease(0.0, 1.0, "late")]})


if __name__ == "__main__":
    unittest.main()
