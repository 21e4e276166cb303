"""The sites of apps/bench/run: the emulated link (netem/wan) and the two-site PVM virtual machine
(apps/pvm-sites) brought up and torn down, the round trip measured, and the running benchmark job
stopped. A mixin of the Bench class (run_points.py): it uses its arguments, environment and child."""

import os
import re
import signal
import subprocess

from bench_common import ROOT, WAN, run_tool, speaker
from report import PVM_ROUTES, rate_text
from run_plan import LP_BENCH, MPI_STOP_GRACE_S, PVM_SITES

say = speaker("bench")

PROFILES = os.path.join(ROOT, "netem", "profiles")
PING_COUNT = 5


def profile_rate_bit_s(profile):
    with open(PROFILES) as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#") and fields[0] == profile:
                return float(fields[4]) * 1e6
    raise SystemExit(f"bench: unknown profile '{profile}' (see {PROFILES})")


class Sites:
    """Set-up and teardown of a Bench (its args, env, child and the RTT it measures)."""

    def run_tool(self, argv, timeout=300):
        return run_tool(argv, self.env, timeout)

    def set_up(self):
        wan_args = [WAN, "up", "--profile", self.args.profile] + (["--tune-hosts"] if self.args.tune_hosts else [])
        if self.args.delay is not None:
            wan_args += ["--delay", f"{self.args.delay:g}"]
        say(f"link up: {' '.join(wan_args[1:])} (instance {self.args.instance})")
        self.run_tool(wan_args)
        self.rtt_s = self.measure_rtt()
        say(f"measured RTT {self.rtt_s * 1000:.1f} ms, profile rate {rate_text(self.rate_bit_s)}")
        if self.pvm_used():
            self.pvm_up()

    def pvm_used(self):
        return any(route in PVM_ROUTES for route in self.args.routes)

    def pvm_up(self):
        say("two-site PVM up")
        self.run_tool([PVM_SITES, "up", "--ep", os.path.dirname(LP_BENCH)])

    def restart_pvm(self):
        """A killed lp-bench leaves its worker and the rest of its batch in the pvmds, which go on
        delivering it (one fragment per round trip, a minute at 1 KiB) while the next point waits
        behind it: start the virtual machine afresh instead (seconds)."""
        say("a batch was cut off mid-flight: restarting the two-site PVM")
        self.run_tool([PVM_SITES, "down"])
        self.pvm_up()

    def measure_rtt(self):
        out = self.run_tool([WAN, "exec", "a", "ping", "-n", "-q", "-c", str(PING_COUNT), "-i", "0.2", "site-b"])
        match = re.search(r"= [\d.]+/([\d.]+)/", out)
        if not match:
            raise RuntimeError(f"cannot read the RTT from ping:\n{out}")
        return float(match.group(1)) / 1000

    def tear_down(self):
        self.stop_child()
        if self.child:
            self.child.wait()
        for argv in ([PVM_SITES, "down"] if self.pvm_used() else [], [WAN, "down"]):
            if not argv:
                continue
            try:
                subprocess.run(argv, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
            except Exception as error:  # keep tearing down the rest
                say(f"teardown step {' '.join(argv)} failed: {error}")
        say("torn down: PVM virtual machine and link" if self.pvm_used() else "torn down: link")

    def stop_child(self):
        """Kills the running lp-bench (its whole process group); safe from the watchdog thread.
        An MPI job gets SIGTERM first, so that mpi-sites ends its ranks on both sites."""
        child = self.child
        if child and child.poll() is None:
            try:
                if self.child_is_mpi:
                    os.killpg(child.pid, signal.SIGTERM)
                    try:
                        child.wait(MPI_STOP_GRACE_S)
                        return
                    except subprocess.TimeoutExpired:
                        pass
                os.killpg(child.pid, signal.SIGKILL)
                os.killpg(child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
