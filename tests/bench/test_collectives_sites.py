"""Unit test of apps/bench/collectives_sites.py (collectives --sites N) on fixed profiles.
Usage: test_collectives_sites.py APPS_BENCH_DIR"""
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "apps/bench")
import collectives_sites as sites  # noqa: E402

PROFILES = {"geo": (0.270, 155e6), "transatlantic": (0.040, 100e6), "thin": (0.030, 2e6), "lan": (0.0, 0.0)}


def links(text):
    return sites.access_links(text.split(","), PROFILES.__getitem__)


class SitesTest(unittest.TestCase):
    def test_default_profiles_cycle(self):
        self.assertEqual(sites.site_specs(4, None), ["geo", "transatlantic", "thin", "geo"])
        with self.assertRaises(SystemExit):
            sites.site_specs(3, "geo,thin")

    def test_overrides_and_unlimited_rate(self):
        geo, lan = links("geo:delay=15:rate-back=10,lan")
        self.assertEqual(geo["up"], (0.015, 155e6))
        self.assertEqual(geo["down"], (0.015, 10e6))
        self.assertEqual(lan["up"], (0.0, float("inf")))

    def test_placements_and_hosts(self):
        self.assertEqual(sites.rank_sites("block", 2, 3), [0, 0, 1, 1, 2, 2])
        self.assertEqual(sites.rank_sites("round-robin", 2, 3), [0, 1, 2, 0, 1, 2])
        self.assertEqual(sites.site_hosts(3), ["s1-gw", "s2-gw", "s3-gw"])

    def test_two_sites_give_the_two_site_limit(self):
        # One one-way delay (both access links) plus the data once at the thinner rate.
        limit = sites.limit_ms("bcast", 65536, [0, 1], links("transatlantic,thin"))
        self.assertAlmostEqual(limit, 70 + 65536 * 8 / 2e6 * 1000)

    def test_slowest_pair_and_busiest_access_link(self):
        three = links("geo,transatlantic,thin")
        ranks = sites.rank_sites("block", 2, 3)
        # A barrier moves no data: the slowest pair, geo + transatlantic.
        self.assertAlmostEqual(sites.limit_ms("barrier", 0, ranks, three), 310)
        # Alltoall of 1 KiB: the thin line's uplink carries 2 x 4 blocks.
        self.assertAlmostEqual(sites.limit_ms("alltoall", 1024, ranks, three), 310 + 8 * 8192 / 2e6 * 1000)
        # Gather: only blocks to the root's site; thin's uplink carries its 2 blocks.
        flows = sites.pair_bytes("gather", 1024, ranks, 3)
        self.assertEqual(flows[(2, 0)], 2048)
        self.assertEqual(set(flows), {(1, 0), (2, 0)})  # the pairs whose delay counts
        # Allreduce: every site's data to every other: thin's uplink twice, thin's downlink twice.
        self.assertAlmostEqual(sites.limit_ms("allreduce", 65536, ranks, three), 310 + 8 * 2 * 65536 / 2e6 * 1000)


if __name__ == "__main__":
    unittest.main()
