"""One run of apps/bench/sweep: the link brought up per point, and each point measured within its
time budget: lp-perf's first and warm batches per size, iperf3 per congestion control, and SRT
(sweep_srt.py). The rows it collects are written by sweep_report.py."""

import csv
import datetime
import json
import os
import re
import secrets
import statistics
import subprocess
import tempfile
import time

from bench_common import BUILD_DIR, WAN, run_tool, speaker
from report import human_size
from sweep_grid import size_label
from sweep_report import SweepReport
from sweep_srt import SRT_TOOL, SrtRuns

say = speaker("sweep")

LP_PERF = os.path.join(BUILD_DIR, "apps", "lp-perf", "lp-perf")
IPERF3 = "iperf3"
PING_COUNT = 5
IPERF_PORT = 5201
LP_PERF_PINGS = 3           # lp-perf's own round trips (its R); the sweep's floor uses ping's R
# The tool's own variables, kept; every other LONGPIPE_* is dropped so the defaults are measured.
TOOL_VARIABLES = ("LONGPIPE_WAN", "LONGPIPE_BUILD_DIR")


class Sweep(SrtRuns, SweepReport):
    """One sweep: its arguments, the environment its tools get, the processes it started, and the rows
    and notes it collects (raw: one per lp-perf batch, iperf3 or SRT run; summary: one per point)."""

    def __init__(self, args):
        self.args = args
        env = {k: v for k, v in os.environ.items() if not k.startswith("LONGPIPE_") or k in TOOL_VARIABLES}
        env.update(LP_WAN_INSTANCE=args.instance, LONGPIPE_WAN=WAN, LONGPIPE_BUILD_DIR=BUILD_DIR)
        self.env = env
        self.work = tempfile.mkdtemp(prefix="lp-sweep.")
        # lp-perf's serve and run must share a job key; a fresh one for this sweep. Their warm-start
        # cache (docs/engine/path-state.md) is a fresh file per point and
        # size (lp_perf): every point is another path at the same address, and an entry one point
        # wrote would meet the next as a path seen before (validated by the round trip only), so its
        # first batch would not be a new path's, which is what the goal (<= 4x) is about.
        self.perf_env = dict(env, LONGPIPE_KEY=secrets.token_hex(32))
        if args.carrier:
            self.perf_env["LONGPIPE_CARRIER"] = args.carrier
        self.dropped = sorted(k for k in os.environ if k.startswith("LONGPIPE_") and k not in TOOL_VARIABLES)
        self.raw = []        # one row per lp-perf batch or iperf3 run
        self.summary = []    # one row per point
        self.notes = []      # whole-run notes
        self.children = []   # processes of ours still running (servers)
        self.link_up = False
        # srt-tools (debian-packages.txt) missing: SRT is skipped with a note, the rest is measured.
        self.srt_missing = args.srt_seconds > 0 and subprocess.run(
            ["which", SRT_TOOL], stdout=subprocess.DEVNULL).returncode != 0
        if self.srt_missing:
            self.notes.append(f"SRT not measured: {SRT_TOOL} not installed (Debian's srt-tools; ./longpipe installs it)")
        self.started = datetime.datetime.now(datetime.timezone.utc)

    # --- processes ------------------------------------------------------------------------------

    def tool(self, argv, timeout=120):
        return run_tool(argv, self.env, timeout)

    def start_server(self, argv, log_path, ready_pattern, env):
        """Starts a server in a site and waits until its log shows it listening."""
        log = open(log_path, "w")
        child = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.children.append(child)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with open(log_path) as f:
                if re.search(ready_pattern, f.read()):
                    return child
            if child.poll() is not None:
                break
            time.sleep(0.05)
        self.stop(child)
        with open(log_path) as f:
            raise RuntimeError(f"{' '.join(argv)} did not start:\n{f.read()[-800:]}")

    def stop(self, child):
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        if child in self.children:
            self.children.remove(child)

    # --- the link -------------------------------------------------------------------------------

    def bring_up(self, point):
        argv = [WAN, "up", "--delay", f"{point.delay_ms:g}", "--rate", f"{point.rate_mbit:g}",
                "--loss", f"{point.loss_pct:g}", "--jitter", "0"]
        if self.args.tune_hosts:
            argv.append("--tune-hosts")
        self.tool(argv, timeout=180)
        self.link_up = True
        out = subprocess.run([WAN, "exec", "a", "ping", "-n", "-q", "-c", str(PING_COUNT), "-i", "0.2", "-W",
                              str(max(2, int(point.rtt_ms / 1000 * 3) + 1)), "site-b"],
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=60).stdout
        match = re.search(r"= ([\d.]+)/([\d.]+)/", out)
        if match:
            return float(match.group(1))
        say(f"  no ping answered at {point.name}; the floor uses the configured RTT")
        return None

    def tear_down(self):
        for child in list(self.children):
            self.stop(child)
        if self.link_up:
            try:
                self.tool([WAN, "down"])
                say("torn down: link")
            except Exception as error:  # noqa: BLE001 -- report, never hide the measurement's own error
                say(f"teardown failed: {error}")
        subprocess.run(["rm", "-rf", self.work], check=False)

    # --- one point ------------------------------------------------------------------------------

    def measure(self):
        for index, point in enumerate(self.args.points, 1):
            say(f"point {index}/{len(self.args.points)}: {point.name} (RTT {point.rtt_ms:g} ms)")
            self.point(point)

    def point(self, point):
        load_start = os.getloadavg()[0]
        started = time.monotonic()
        deadline = started + self.args.point_budget
        row = {"point": point.name, "one_way_ms": point.delay_ms, "rtt_ms": point.rtt_ms,
               "rate_mbit": point.rate_mbit, "loss_pct": point.loss_pct}
        notes = []
        self.summary.append(row)
        ping_ms = self.bring_up(point)
        row["measured_rtt_ms"] = round(ping_ms, 2) if ping_ms else ""
        rtt_s = (ping_ms if ping_ms else point.rtt_ms) / 1000
        # iperf3's and SRT's runs come after lp-perf; their time is reserved first.
        reserve = len(self.args.congestion) * (self.args.iperf_seconds + 8 + 4 * rtt_s) \
            if self.args.iperf_seconds > 0 else 0
        reserve += len(self.args.srt_modes) * (self.srt_limit(rtt_s) + 8) if self.args.srt_seconds > 0 else 0
        for size in self.args.sizes:
            self.lp_perf(point, rtt_s, size, row, notes, deadline - reserve)
        largest = max(self.args.sizes)
        warm = row.get(f"{size_label(largest)}_warm_ms")
        if warm:
            # Goodput while data flowed: the batch's bytes over its time less the one round trip every
            # batch spends (first byte out, last acknowledgement back).
            total_s = warm / 1000 * self.args.count
            seconds = total_s - rtt_s if total_s > 2 * rtt_s else total_s
            goodput = self.args.count * largest * 8 / seconds / 1e6
            row["longpipe_goodput_mbit"] = round(goodput, 2)
            row["longpipe_goodput_share"] = round(goodput / point.rate_mbit, 3)
        else:
            row["longpipe_goodput_mbit"] = row["longpipe_goodput_share"] = ""
        for congestion in self.args.congestion:
            self.iperf(point, congestion, row, notes, deadline)
        for mode in self.args.srt_modes:
            self.srt(point, mode, rtt_s, row, notes, deadline)
        row["seconds"] = round(time.monotonic() - started, 1)
        row["load_start"] = round(load_start, 2)
        row["load_end"] = round(os.getloadavg()[0], 2)
        row["notes"] = "; ".join(notes)
        row["goal_misses"] = "; ".join(self.goal_misses(point, row))
        say(f"  done in {row['seconds']:.0f} s (load {row['load_start']:.1f} -> {row['load_end']:.1f})"
            + (f"; misses: {row['goal_misses']}" if row["goal_misses"] else ""))

    def floor_ms(self, rtt_s, size, rate_mbit):
        return (rtt_s / self.args.count + size * 8 / (rate_mbit * 1e6)) * 1000

    def lp_perf(self, point, rtt_s, size, row, notes, deadline):
        label = size_label(size)
        floor = self.floor_ms(rtt_s, size, point.rate_mbit)
        row[f"{label}_floor_ms"] = round(floor, 4)
        for key in ("first_ms", "first_x", "warm_ms", "warm_x", "warm_batches"):
            row[f"{label}_{key}"] = ""
        # Estimates for the budget: a warm batch ~ the floor's T at 90 % of the rate plus a round trip;
        # the first also pays connect, authentication and slow start (several round trips).
        warm_s = self.args.count * size * 8 / (point.rate_mbit * 1e6 * 0.9) + 2 * rtt_s
        first_s = warm_s + 10 * rtt_s + 1
        setup_s = 3 + (LP_PERF_PINGS + 2) * rtt_s
        left = deadline - time.monotonic()
        batches = min(self.args.batches, 1 + int((left - setup_s - first_s) / warm_s)) if left > 0 else 0
        if batches < 2:
            note = (f"{human_size(size)} skipped (budget): the first batch and one warm one need ~"
                    f"{setup_s + first_s + warm_s:.0f} s, {max(0, left):.0f} s of the point budget left")
            notes.append(note)
            say(f"  {note}")
            return
        if batches < self.args.batches:
            notes.append(f"{human_size(size)}: {batches} of {self.args.batches} batches (budget)")
        # A file of its own per point and size: a run that fails before its first batch must not find
        # an earlier point's rows.
        csv_path = os.path.join(self.work, f"perf-{len(self.summary)}-{label}.csv")
        if os.path.exists(csv_path):
            os.remove(csv_path)
        perf_env = dict(self.perf_env, LONGPIPE_PATH_CACHE=os.path.join(self.work, f"paths-{len(self.summary)}-{label}"))
        server = self.start_server([WAN, "exec", "b", LP_PERF, "serve"], os.path.join(self.work, "serve.log"),
                                   r"serving on", perf_env)
        argv = [WAN, "exec", "a", LP_PERF, "run", "--peer", "site-b", "--count", str(self.args.count),
                "--size", str(size), "--batches", str(batches - 1), "--ack", "each",
                "--link-rate", f"{point.rate_mbit:g}", "--pings", str(LP_PERF_PINGS), "--csv", csv_path]
        log_path = os.path.join(self.work, f"run-{len(self.summary)}-{label}.log")
        try:
            with open(log_path, "w") as log:
                client = subprocess.Popen(argv, env=perf_env, stdout=log, stderr=subprocess.STDOUT)
            self.children.append(client)
            try:
                status = client.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                status = None
                notes.append(f"{human_size(size)}: stopped at the point budget")
            self.stop(client)
        finally:
            self.stop(server)
        batches_rows = []
        if os.path.exists(csv_path):
            with open(csv_path) as f:
                batches_rows = list(csv.DictReader(f))
        if status not in (0, None) or not batches_rows:
            with open(log_path) as f:
                tail = f.read().strip()[-300:]
            notes.append(f"{human_size(size)}: lp-perf failed (status {status}): {tail}")
            say(f"  {notes[-1]}")
        warm = []
        for r in batches_rows:
            t_ms = float(r["t_ms"])
            self.raw.append({"point": point.name, "one_way_ms": point.delay_ms, "rate_mbit": point.rate_mbit,
                             "loss_pct": point.loss_pct, "tool": "lp-perf", "size_bytes": size, "congestion": "",
                             "batch": int(r["batch"]), "kind": r["kind"], "seconds": float(r["T_s"]),
                             "t_ms": round(t_ms, 4), "floor_ms": round(floor, 4), "t_over_floor": round(t_ms / floor, 4),
                             "lp_perf_rtt_ms": round(float(r["rtt_ms"]), 2), "goodput_mbit": "", "goodput_share": ""})
            if r["kind"] == "cold":
                row[f"{label}_first_ms"] = round(t_ms, 3)
                row[f"{label}_first_x"] = round(t_ms / floor, 3)
            else:
                warm.append(t_ms)
        if warm:
            median = statistics.median(warm)
            row[f"{label}_warm_ms"] = round(median, 3)
            row[f"{label}_warm_x"] = round(median / floor, 3)
            row[f"{label}_warm_batches"] = len(warm)
        say(f"  {human_size(size)}: floor {floor:.3f} ms, first {row[f'{label}_first_ms'] or '-'} ms "
            f"(x{row[f'{label}_first_x'] or '-'}), warm median {row[f'{label}_warm_ms'] or '-'} ms "
            f"(x{row[f'{label}_warm_x'] or '-'}, {len(warm)} batches)")

    def iperf(self, point, congestion, row, notes, deadline):
        row[f"{congestion}_goodput_mbit"] = row[f"{congestion}_goodput_share"] = ""
        seconds = self.args.iperf_seconds
        if seconds <= 0:
            return
        left = deadline - time.monotonic()
        if left < seconds + 5:
            notes.append(f"iperf3 {congestion} skipped (budget): {seconds:g} s run, {max(0, left):.0f} s left")
            say(f"  {notes[-1]}")
            return
        server = self.start_server([WAN, "exec", "b", IPERF3, "-s", "-1", "--forceflush", "-p", str(IPERF_PORT)],
                                   os.path.join(self.work, "iperf-server.log"), r"listening", self.env)
        argv = [WAN, "exec", "a", IPERF3, "-c", "site-b", "-p", str(IPERF_PORT), "-t", f"{seconds:g}", "-C",
                congestion, "-J"]
        try:
            result = subprocess.run(argv, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    timeout=max(seconds + 5, min(left, seconds + 60)))
            report = json.loads(result.stdout) if result.stdout.strip() else {}
        except subprocess.TimeoutExpired:
            notes.append(f"iperf3 {congestion}: did not end in time")
            say(f"  {notes[-1]}")
            return
        except ValueError:
            report = {}
        finally:
            self.stop(server)
        received = report.get("end", {}).get("sum_received", {}).get("bits_per_second")
        if report.get("error") or not received:
            notes.append(f"iperf3 {congestion} failed: {report.get('error') or result.stderr.strip()[-200:]}")
            say(f"  {notes[-1]}")
            return
        goodput = received / 1e6
        share = goodput / point.rate_mbit
        row[f"{congestion}_goodput_mbit"] = round(goodput, 2)
        row[f"{congestion}_goodput_share"] = round(share, 3)
        self.raw.append({"point": point.name, "one_way_ms": point.delay_ms, "rate_mbit": point.rate_mbit,
                         "loss_pct": point.loss_pct, "tool": "iperf3", "size_bytes": "", "congestion": congestion,
                         "batch": "", "kind": "", "seconds": seconds, "t_ms": "", "floor_ms": "", "t_over_floor": "",
                         "lp_perf_rtt_ms": "", "goodput_mbit": round(goodput, 2), "goodput_share": round(share, 4)})
        say(f"  iperf3 {congestion}: {goodput:.1f} Mbit/s ({100 * share:.0f} % of the link) over {seconds:g} s")
