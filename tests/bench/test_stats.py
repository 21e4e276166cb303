"""Unit test of apps/bench/stats.py on fixed data. Usage: test_stats.py APPS_BENCH_DIR"""
import sys
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "apps/bench")
import stats  # noqa: E402


class WarmupTest(unittest.TestCase):
    def test_drops_the_first_batches(self):
        self.assertEqual(stats.drop_warmup([9.0, 5.0, 1.0, 2.0], 2), [1.0, 2.0])

    def test_no_warmup_keeps_everything(self):
        self.assertEqual(stats.drop_warmup([3.0, 4.0], 0), [3.0, 4.0])

    def test_negative_warmup_is_an_error(self):
        with self.assertRaises(ValueError):
            stats.drop_warmup([1.0], -1)

    def test_summary_needs_samples_after_warmup(self):
        with self.assertRaisesRegex(ValueError, "leave none"):
            stats.summarize([1.0, 2.0], 2)


class QuartileTest(unittest.TestCase):
    def test_odd_count(self):
        # Inclusive method on 1..5: Q1 = 2, median = 3, Q3 = 4.
        self.assertEqual(stats.quartiles([5.0, 1.0, 3.0, 2.0, 4.0]), (2.0, 3.0, 4.0))

    def test_even_count_interpolates(self):
        # 1, 2, 3, 4: Q1 at position 0.75 -> 1.75, median 2.5, Q3 at 2.25 -> 3.25.
        self.assertEqual(stats.quartiles([4.0, 3.0, 2.0, 1.0]), (1.75, 2.5, 3.25))

    def test_single_sample(self):
        self.assertEqual(stats.quartiles([7.0]), (7.0, 7.0, 7.0))


class SummaryTest(unittest.TestCase):
    def test_median_minimum_and_outlier_beyond_upper_fence(self):
        # Batch 1 is warm-up (slow start): dropped. Measured: 1.0 1.1 1.2 1.3 5.0.
        # Q1 = 1.1, Q3 = 1.3, IQR = 0.2, fence = 1.3 + 0.3 = 1.6: only 5.0 (batch 6) lies beyond.
        summary = stats.summarize([9.0, 1.2, 1.0, 5.0, 1.3, 1.1], warmup=1)
        self.assertEqual(summary["n"], 5)
        self.assertAlmostEqual(summary["median"], 1.2)
        self.assertEqual(summary["minimum"], 1.0)
        self.assertAlmostEqual(summary["q1"], 1.1)
        self.assertAlmostEqual(summary["q3"], 1.3)
        self.assertAlmostEqual(summary["upper_fence"], 1.6)
        self.assertEqual(summary["outliers"], [3])  # index in the batch order, warm-up included

    def test_warmup_never_counts_as_outlier(self):
        summary = stats.summarize([100.0, 1.0, 1.0, 1.0], warmup=1)
        self.assertEqual(summary["outliers"], [])
        self.assertEqual(summary["median"], 1.0)

    def test_value_on_the_fence_is_not_an_outlier(self):
        # 1, 2, 3, 4, 7: Q1 = 2, Q3 = 4, fence = 7: 7 is not beyond it.
        summary = stats.summarize([1.0, 2.0, 3.0, 4.0, 7.0], warmup=0)
        self.assertEqual(summary["upper_fence"], 7.0)
        self.assertEqual(summary["outliers"], [])


class FloorTest(unittest.TestCase):
    def test_geo_floor(self):
        # R = 0.54 s, X = 100, P = 1 MiB at 155 Mbit/s: 5.4 ms + 54.1 ms.
        floor = stats.floor_per_message(0.54, 100, 1048576, 155e6)
        self.assertAlmostEqual(floor, 0.0054 + 1048576 * 8 / 155e6)

    def test_unlimited_rate_has_no_serialisation(self):
        self.assertEqual(stats.floor_per_message(0.001, 100, 1024, 0), 0.00001)

    def test_throughput(self):
        self.assertEqual(stats.throughput_bit_s(1000, 0.001), 8e6)


if __name__ == "__main__":
    unittest.main(verbosity=2)
