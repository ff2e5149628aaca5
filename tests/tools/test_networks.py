"""The network table (tools/farmtools/networks.py): what the proxy is asked for and how networks
order by delay, checked against the presets' documented values (the paper's lab and dorm)."""
import math
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools import networks  # noqa: E402


class NetworkTableTest(unittest.TestCase):
    def test_presets(self):
        self.assertEqual(networks.PRESETS["lab"], (0.1, 0.0, 100.0))
        self.assertEqual(networks.PRESETS["dorm"], (2.0, 1.0, 10.0))

    def test_proxy_args(self):
        self.assertIsNone(networks.proxy_args("loopback"))
        self.assertEqual(networks.proxy_args("dorm"), ["--preset", "dorm"])
        self.assertEqual(networks.proxy_args("5ms/10mbit"), ["--delay-ms", "5", "--mbit", "10"])
        with self.assertRaises(SystemExit):
            networks.proxy_args("fast", where="--networks")

    def test_delay_orders_networks(self):
        names = ["20ms", "dorm", "loopback", "5ms/2mbit", "lab", "lab:4,dorm:2", "mystery"]
        self.assertEqual(sorted(names, key=lambda n: (networks.one_way_delay_ms(n), n)),
                         ["loopback", "lab", "dorm", "lab:4,dorm:2", "5ms/2mbit", "20ms", "mystery"])
        self.assertTrue(math.isinf(networks.one_way_delay_ms("mystery")))


if __name__ == "__main__":
    unittest.main()
