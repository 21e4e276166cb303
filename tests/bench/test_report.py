"""Unit test of apps/bench/report.py: combining runs and the Markdown table, on fixed data.
Usage: test_report.py APPS_BENCH_DIR"""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, sys.argv.pop(1) if len(sys.argv) > 1 else "apps/bench")
import report  # noqa: E402

META = {"profile": "geo", "tune_hosts": "0", "rtt_s": "0.540000", "rate_bit_s": "155000000", "count": "100",
        "ack": "each", "encoding": "default", "warmup": "1", "point_budget_s": "180", "date": "d1", "command": "c1"}


def summary(route, size, status="ok", median="0.01", floor="0.0054"):
    ok = status == "ok"
    return {"route": route, "size_bytes": str(size), "count": "100", "batches": "3", "measured": "2",
            "median_t_s": median if ok else "", "min_t_s": median if ok else "", "q1_t_s": "", "q3_t_s": "",
            "upper_fence_s": "", "outlier_batches": "", "floor_t_s": floor,
            "median_over_floor": f"{float(median) / float(floor):.3g}" if ok else "",
            "median_throughput_mbit_s": "", "status": status}


def write_run(directory, rows, notes, meta):
    report.write_report(directory, [], rows, notes, meta, plots=False)


class CombineTest(unittest.TestCase):
    def test_measured_point_replaces_skipped_and_later_run_wins(self):
        with tempfile.TemporaryDirectory() as tmp:
            first, second = os.path.join(tmp, "1"), os.path.join(tmp, "2")
            write_run(first, [summary("default", 1024, median="0.54"), summary("default", 4096, "skipped: budget"),
                              summary("direct", 1024, median="0.03")],
                      [{"route": "default", "size_bytes": 4096, "note": "skipped: budget"},
                       {"route": "", "size_bytes": "", "note": "LongPipe route skipped"}], META)
            write_run(second, [summary("default", 4096, median="1.08"), summary("direct", 1024, median="0.02"),
                               summary("direct", 65536, "skipped: budget")],
                      [{"route": "direct", "size_bytes": 65536, "note": "skipped: budget"}],
                      dict(META, rtt_s="0.542000", date="d2", command="c2"))
            raw, rows, notes, meta = report.combine([first, second])
            by_key = {(r["route"], int(r["size_bytes"])): r for r in rows}
            self.assertEqual(by_key[("default", 4096)]["median_t_s"], "1.08")   # measured beats skipped
            self.assertEqual(by_key[("direct", 1024)]["median_t_s"], "0.02")    # the later run wins
            self.assertEqual(by_key[("default", 1024)]["median_t_s"], "0.54")   # only in the first run
            self.assertEqual(by_key[("direct", 65536)]["status"], "skipped: budget")
            self.assertEqual(len(rows), 4)
            # The note of the replaced skipped point is gone; general notes and live ones stay.
            self.assertEqual(sorted(n["note"] for n in notes), ["LongPipe route skipped", "skipped: budget"])
            self.assertEqual([n["route"] for n in notes if n["route"]], ["direct"])
            self.assertAlmostEqual(float(meta["rtt_s"]), 0.541)
            self.assertEqual(meta["command"], "c1; c2")

    def test_runs_of_different_profiles_are_not_combined(self):
        with tempfile.TemporaryDirectory() as tmp:
            first, second = os.path.join(tmp, "1"), os.path.join(tmp, "2")
            write_run(first, [summary("default", 1)], [], META)
            write_run(second, [summary("default", 1)], [], dict(META, profile="lan"))
            with self.assertRaisesRegex(SystemExit, "different profile"):
                report.combine([first, second])


class TableTest(unittest.TestCase):
    def test_cells_skips_and_ratios_to_longpipe(self):
        rows = [summary("default", 1024, median="0.54", floor="0.00546"),
                summary("direct", 1024, median="0.023", floor="0.00546"),
                summary("longpipe", 1024, median="0.0060", floor="0.00546"),
                summary("default", 65536, "skipped: budget", floor="0.00879")]
        table = report.markdown_table(rows, META, [{"route": "default", "size_bytes": "65536", "note": "skipped: budget"}])
        lines = table.splitlines()
        self.assertIn("| P | floor t (ms) | pvmd default t (ms) | PvmRouteDirect t (ms) | LongPipe t (ms) "
                      "| pvmd default / LongPipe | PvmRouteDirect / LongPipe |", lines)
        self.assertIn("| 1 KiB | 5.46 | 540 (540), x98.9 | 23 (23), x4.21 | 6 (6), x1.1 | 90 | 3.83 |", lines)
        self.assertIn("| 64 KiB | 8.79 | skipped | not run | not run |  |  |", lines)
        self.assertIn("- pvmd default, P = 64 KiB: skipped: budget", lines)
        self.assertIn("stock hosts", lines[0])

    def test_mpi_routes_first_batch_and_ratios_to_longpipe_on_mpi(self):
        rows = [dict(summary("mpi-default", 65536, median="0.6", floor="0.00879"), first_t_s="0.9"),
                dict(summary("mpi-tuned", 65536, median="0.0175", floor="0.00879"), first_t_s="0.0879"),
                dict(summary("mpi-longpipe", 65536, median="0.00879", floor="0.00879"), first_t_s="0.0176")]
        lines = report.markdown_table(rows, META, []).splitlines()
        self.assertIn("| P | floor t (ms) | Open MPI TCP default t (ms) | Open MPI TCP tuned t (ms) "
                      "| LongPipe (MPI) t (ms) | Open MPI TCP default / LongPipe (MPI) "
                      "| Open MPI TCP tuned / LongPipe (MPI) |", lines)
        self.assertIn("| 64 KiB | 8.79 | 600 (600), x68.3; first 900, x102 | 17.5 (17.5), x1.99; first 87.9, x10 "
                      "| 8.79 (8.79), x1; first 17.6, x2 | 68.3 | 1.99 |", lines)
        self.assertIn("first = t and xN of batch 1 of the fresh job", lines[0])

    def test_runs_with_and_without_first_batches_combine(self):
        with tempfile.TemporaryDirectory() as tmp:
            old, new = os.path.join(tmp, "old"), os.path.join(tmp, "new")
            write_run(old, [summary("default", 1024, median="0.54")], [], META)
            write_run(new, [dict(summary("mpi-default", 1024, median="0.01"), first_t_s="0.02")], [], META)
            _, rows, _, _ = report.combine([old, new])
            report.write_report(os.path.join(tmp, "both"), [], rows, [], META, plots=False)
            both = report.read_csv(os.path.join(tmp, "both", "summary.csv"))
            self.assertEqual([(r["route"], r["first_t_s"]) for r in both], [("default", ""), ("mpi-default", "0.02")])

    def test_a_route_skipped_in_one_run_and_measured_in_another_loses_its_note(self):
        with tempfile.TemporaryDirectory() as tmp:
            first, second = os.path.join(tmp, "1"), os.path.join(tmp, "2")
            write_run(first, [summary("mpi-default", 1024)],
                      [{"route": "mpi-longpipe", "size_bytes": "", "note": "LongPipe (MPI) route skipped: no library"},
                       {"route": "mpi-tuned", "size_bytes": "", "note": "Open MPI TCP tuned route skipped"}], META)
            write_run(second, [summary("mpi-longpipe", 1024)], [], META)
            _, _, notes, _ = report.combine([first, second])
            self.assertEqual([n["note"] for n in notes], ["Open MPI TCP tuned route skipped"])
            self.assertEqual(report.note_text(notes[0]), "Open MPI TCP tuned route skipped")


if __name__ == "__main__":
    unittest.main(verbosity=2)
