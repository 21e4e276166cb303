"""The measurements of apps/bench/run: the Bench class runs every (route, size) point as planned
(run_plan.py) on the sites it brought up (run_sites.py), reads the batches the benchmark prints,
and keeps the raw rows, the summary rows with the physical floor, and the notes on what was
skipped, cut short or failed; report.py writes them."""

import datetime
import os
import subprocess
import sys
import tempfile
import threading
import time

import stats
from bench_common import BUILD_DIR, WAN, speaker
from report import MPI_ROUTES, PVM_ROUTES, ROUTE_LABELS, human_size, write_report
from run_plan import LIBLONGPIPE, MPI_FRONT_END_SYMBOL, Planning, library_defines
from run_sites import Sites, profile_rate_bit_s

say = speaker("bench")

# What lp-mpi-bench says at its end when its ranks ran where mpi-sites puts them.
MPI_PLACEMENT_LINE = "rank 0 on site-a, rank 1 on site-b"


class Progress:
    """A one-line progress bar on a terminal, plain lines otherwise."""

    WIDTH = 30

    def __init__(self, total_points):
        self.total = total_points
        self.done = 0
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()

    def show(self, what):
        elapsed = int(time.monotonic() - self.started)
        filled = self.WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        line = f"[{bar}] {self.done}/{self.total} points, {elapsed // 60}m{elapsed % 60:02d}s  {what}"
        if self.tty:
            print("\r\033[K" + line, end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def finish_point(self, what):
        self.done += 1
        self.show(what)
        if self.tty:
            print(file=sys.stderr)


class Bench(Sites, Planning):
    """One benchmark run: its arguments, environment, running job and the rows it collects."""

    def __init__(self, args):
        self.args = args
        self.env = dict(os.environ, LP_WAN_INSTANCE=args.instance, LONGPIPE_WAN=WAN, LONGPIPE_BUILD_DIR=BUILD_DIR)
        self.env.pop("LD_PRELOAD", None)
        self.child = None
        self.child_is_mpi = False
        self.rtt_s = None
        self.rate_bit_s = profile_rate_bit_s(args.profile)
        self.raw_rows = []
        self.summary_rows = []
        self.notes = []
        self.pending = []  # (route, size) points not measured yet

    def measure_point(self, route, size, progress):
        what = f"{ROUTE_LABELS[route]}, P = {human_size(size)}"
        batches, note = self.plan_batches(route, size)
        if batches == 0:
            self.add_summary(route, size, [], note)
            self.add_note(route, size, note)
            progress.finish_point(f"{what}: skipped")
            return
        if note:
            self.add_note(route, size, note)
        argv, deadline_s = self.bench_command(route, size, batches)
        samples, error = [], ""
        progress.show(f"{what}: starting")
        with tempfile.TemporaryFile(mode="w+") as stderr:
            self.child_is_mpi = route in MPI_ROUTES
            self.child = subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                          start_new_session=True, stdin=subprocess.DEVNULL)
            # lp-bench has its own per-batch timeout; this watchdog is the last resort.
            deadline_passed = threading.Event()

            def kill_on_deadline():
                deadline_passed.set()
                self.stop_child()

            watchdog = threading.Timer(deadline_s, kill_on_deadline)
            watchdog.start()
            point_started = time.monotonic()
            cut_short = False
            try:
                for line in self.child.stdout:
                    fields = line.strip().split(",")
                    if len(fields) == 8 and fields[0].isdigit():
                        samples.append((float(fields[6]), float(fields[7])))
                        progress.show(f"{what}: batch {len(samples)}/{batches}, last t = {samples[-1][1] * 1000:.2f} ms")
                        # The estimate may have been optimistic: stop once another batch would
                        # overrun the budget, as long as one measured batch is in.
                        elapsed = time.monotonic() - point_started
                        if (len(samples) > self.args.warmup and len(samples) < batches
                                and elapsed + samples[-1][0] > self.args.point_budget):
                            cut_short = True
                            self.stop_child()
                            break
                returncode = self.child.wait()
            finally:
                watchdog.cancel()
            if cut_short:
                self.add_note(route, size, f"{len(samples)} of {batches} batches (the next would overrun the "
                                           f"point budget of {self.args.point_budget:g} s)")
            elif deadline_passed.is_set():
                error = f"failed: killed after {deadline_s:.0f} s"
            elif returncode != 0:
                stderr.seek(0)
                lines = [l for l in stderr.read().splitlines()
                         if l.strip() and not l.startswith("[t") and not l.startswith("---")]
                error = f"failed: {lines[-1] if lines else 'exit status ' + str(returncode)}"
            elif route in MPI_ROUTES:
                # The two ranks must have run on different sites, sender on site-a.
                stderr.seek(0)
                if MPI_PLACEMENT_LINE not in stderr.read():
                    error = f"failed: lp-mpi-bench did not report '{MPI_PLACEMENT_LINE}'"
        self.child = None
        for batch, (total, per_message) in enumerate(samples, start=1):
            self.raw_rows.append({"route": route, "size_bytes": size, "count": self.args.count, "ack": self.args.ack,
                                  "encoding": "" if route in MPI_ROUTES else self.args.encoding,
                                  "batch": batch, "total_s": total,
                                  "per_message_s": per_message, "warmup": int(batch <= self.args.warmup),
                                  "outlier": 0})
        status = error or "ok"
        if status == "ok" and len(samples) <= self.args.warmup:
            status = f"failed: only {len(samples)} batches"
        if status != "ok":
            self.add_note(route, size, status)
        self.add_summary(route, size, [t for _, t in samples] if status == "ok" else [], status)
        if samples:
            self.summary_rows[-1]["first_t_s"] = f"{samples[0][1]:.6g}"
        progress.finish_point(f"{what}: {status}")
        if (cut_short or deadline_passed.is_set()) and route in PVM_ROUTES:
            self.restart_pvm()

    def floor_per_message(self, size):
        """The physical floor of t. Both ways at once (--send bidirectional), a window ends when the
        other rank's X messages are in: they left at about the same time, so one one-way delay
        (half the round trip) plus their serialisation, the link being full duplex."""
        latency_s = self.rtt_s / 2 if self.args.send == "bidirectional" else self.rtt_s
        return stats.floor_per_message(latency_s, self.args.count, size, self.rate_bit_s)

    def add_summary(self, route, size, samples, status):
        floor = self.floor_per_message(size)
        row = {"route": route, "size_bytes": size, "count": self.args.count, "batches": len(samples),
               "measured": 0, "median_t_s": "", "min_t_s": "", "q1_t_s": "", "q3_t_s": "", "upper_fence_s": "",
               "outlier_batches": "", "floor_t_s": f"{floor:.6g}", "median_over_floor": "",
               "median_throughput_mbit_s": "", "status": status or "ok"}
        if samples:
            summary = stats.summarize(samples, self.args.warmup)
            for index in summary["outliers"]:
                self.mark_outlier(route, size, index + 1)
            row.update(measured=summary["n"], median_t_s=f"{summary['median']:.6g}",
                       min_t_s=f"{summary['minimum']:.6g}", q1_t_s=f"{summary['q1']:.6g}",
                       q3_t_s=f"{summary['q3']:.6g}", upper_fence_s=f"{summary['upper_fence']:.6g}",
                       outlier_batches=" ".join(str(i + 1) for i in summary["outliers"]),
                       median_over_floor=f"{summary['median'] / floor:.3g}",
                       median_throughput_mbit_s=f"{stats.throughput_bit_s(size, summary['median']) / 1e6:.4g}")
        self.summary_rows.append(row)

    def mark_outlier(self, route, size, batch):
        for row in self.raw_rows:
            if row["route"] == route and row["size_bytes"] == size and row["batch"] == batch:
                row["outlier"] = 1

    def measure(self):
        routes = list(self.args.routes)
        for route in ("longpipe", "mpi-longpipe"):
            if route in routes and not os.path.exists(LIBLONGPIPE):
                routes.remove(route)
                note = f"{ROUTE_LABELS[route]} route skipped: {LIBLONGPIPE} does not exist (build libshim first)"
                self.add_note(route, "", note)
                say(note)
        if "mpi-longpipe" in routes and not library_defines(LIBLONGPIPE, MPI_FRONT_END_SYMBOL):
            routes.remove("mpi-longpipe")
            note = f"LongPipe (MPI) route skipped: {LIBLONGPIPE} has no MPI front end yet (no {MPI_FRONT_END_SYMBOL})"
            self.add_note("mpi-longpipe", "", note)
            say(note)
        self.pending = [(route, size) for route in routes for size in sorted(self.args.sizes)]
        progress = Progress(len(self.pending))
        while self.pending:
            self.measure_point(*self.pending[0], progress)
            self.pending.pop(0)

    def note_stop(self, reason):
        """Says which points a run that stopped early did not measure."""
        missing = ", ".join(f"{ROUTE_LABELS[r]} {human_size(p)}" for r, p in self.pending)
        self.add_note("", "", f"run stopped early ({reason}); not measured: {missing or 'none'}")

    def add_note(self, route, size, note):
        """What was skipped, cut short or failed, and why: printed under the table, in notes.csv."""
        self.notes.append({"route": route, "size_bytes": size, "note": note})

    # --- results ---------------------------------------------------------------------------

    def write_results(self):
        profile = self.args.profile + ("" if self.args.delay is None else f" with delay {self.args.delay:g} ms")
        meta = {"profile": profile, "tune_hosts": int(self.args.tune_hosts), "rtt_s": f"{self.rtt_s:.6f}",
                "rate_bit_s": f"{self.rate_bit_s:.0f}", "count": self.args.count,
                "ack": "none" if self.args.send == "bidirectional" else self.args.ack, "send": self.args.send,
                "encoding": self.args.encoding, "warmup": self.args.warmup,
                "point_budget_s": self.args.point_budget,
                "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "command": "./longpipe bench " + " ".join(sys.argv[1:])}
        print(write_report(self.args.out, self.raw_rows, self.summary_rows, self.notes, meta,
                           plots=not self.args.no_plots), end="")
        say(f"results in {self.args.out} (table.md, summary.csv, raw.csv, notes.csv, meta.csv"
            f"{'' if self.args.no_plots else ', *.png'})")
