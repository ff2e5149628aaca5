"""The delaying proxy's link model (tools/net/delay_proxy.py): serialisation at the bandwidth,
then the one-way delay; with --shared-link every connection queues on the same link."""
import random
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from net import delay_proxy  # noqa: E402


class LinkTest(unittest.TestCase):
    def direction(self, link=None):
        # 1000 bytes/s, 0.1 s one way, no jitter.
        return delay_proxy.Direction(0.1, 0.0, 1000.0, random.Random(1), link=link)

    def test_own_links_do_not_queue_behind_each_other(self):
        a, b = self.direction(), self.direction()
        self.assertAlmostEqual(a.schedule(0.0, 500), 0.6)
        self.assertAlmostEqual(b.schedule(0.0, 500), 0.6)

    def test_shared_link_serialises_all_connections(self):
        link = delay_proxy.Link()
        a, b = self.direction(link), self.direction(link)
        self.assertAlmostEqual(a.schedule(0.0, 500), 0.6)
        self.assertAlmostEqual(b.schedule(0.0, 500), 1.1)  # waited for a's 500 bytes
        self.assertAlmostEqual(a.schedule(2.0, 100), 2.2)  # idle link: no wait

    def test_flag_makes_the_shared_links(self):
        args = delay_proxy.parse(["--target", "127.0.0.1:1", "--mbit", "20", "--shared-link"])
        self.assertTrue(args.shared_link)
        self.assertEqual(args.up_rate, 20e6 / 8)
        self.assertFalse(delay_proxy.parse(["--target", "127.0.0.1:1"]).shared_link)


if __name__ == "__main__":
    unittest.main()
