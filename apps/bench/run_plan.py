"""The plan of apps/bench/run: how long a batch should take on a route (from the sizes measured
before, or the pvmds' stop-and-wait), how many batches fit a point's budget, and the command that
runs a point: lp-bench across the PVM sites, or lp-mpi-bench across the MPI sites with the route's
settings. A mixin of the Bench class (run_points.py): it reads its arguments, RTT and summary."""

import math
import os
import subprocess

from bench_common import BUILD_DIR, ROOT
from report import MPI_ROUTES

PVM_SITES = os.path.join(ROOT, "apps", "pvm-sites", "pvm-sites")
LP_BENCH = os.path.join(BUILD_DIR, "apps", "bench", "lp-bench")
LIBLONGPIPE = os.path.join(BUILD_DIR, "libshim", "liblongpipe.so")
MPI_SITES = os.path.join(ROOT, "apps", "mpi-sites", "mpi-sites")
LP_MPI_BENCH = os.path.join(BUILD_DIR, "apps", "bench", "lp-mpi-bench")
# The MPI front end's presence in liblongpipe.so: the library defines MPI_Send once it interposes MPI.
MPI_FRONT_END_SYMBOL = "MPI_Send"

# The "tuned" Open MPI route: the best a user can do by hand, without root, with mpirun --mca.
# Every message up to 1 MiB (plus ob1's match header, well under 1 KiB) goes eagerly in one fragment:
# no rendezvous round trip per message (the defaults send above 64 KiB by rendezvous, and split
# fragments at 128 KiB). Socket buffers: an explicit SO_SNDBUF of 4 MiB (the unprivileged cap,
# net.core.wmem_max) is doubled by the kernel to 8 MiB, twice what autotuning reaches under
# tcp_wmem's 4 MiB maximum; receive buffers stay autotuned (tcp_rmem allows more than an explicit
# SO_RCVBUF could).
TUNED_EAGER_BYTES = (1 << 20) + 1024
TUNED_SOCKET_BUFFER_BYTES = 4 << 20
MPI_TUNED_MCA = [("btl_tcp_eager_limit", TUNED_EAGER_BYTES), ("btl_tcp_rndv_eager_limit", TUNED_EAGER_BYTES),
                 ("btl_tcp_max_send_size", TUNED_EAGER_BYTES), ("btl_tcp_sndbuf", TUNED_SOCKET_BUFFER_BYTES)]
# Open MPI's TCP eager limit (btl_tcp_eager_limit, which counts ob1's match header): larger
# messages go by rendezvous, one round trip each before their data when sent with MPI_Send.
OPEN_MPI_DEFAULT_EAGER_BYTES = 64 << 10
OPEN_MPI_HEADER_BYTES = 64
# How long an MPI job gets to end after SIGTERM (mpi-sites ends its ranks on both sites) before SIGKILL.
MPI_STOP_GRACE_S = 15

# A batch is killed when it takes this many times its estimate (and never before this minimum).
BATCH_TIMEOUT_FACTOR, MIN_BATCH_TIMEOUT_S = 10.0, 60.0
# Fixed per-run start-up of lp-bench (spawn, hello, exit notification): a few round trips.
STARTUP_ROUND_TRIPS = 6
# Used to scale a measured batch time to a larger message: PVM's fragment size, plus headers.
FRAGMENT_BYTES = 4096
# Message bytes one pvmd fragment carries (a fragment is 4080 bytes on the wire, PLATFORM.md).
PVMD_FRAGMENT_PAYLOAD = 4080


class Planning:
    """Batch estimates, batch plans and benchmark commands of a Bench."""

    # --- measuring -------------------------------------------------------------------------

    def estimate_batch_s(self, route, size):
        """A batch's expected duration, from the largest size already measured on this route
        (scaled by the number of PVM fragments), or None before the first measurement. On Open MPI's
        default route, a rendezvous round trip per message above its eager limit comes on top."""
        done = [r for r in self.summary_rows if r["route"] == route and r["status"] == "ok" and int(r["size_bytes"]) <= size]
        if not done and route == "default":
            # The pvmds' stop-and-wait: at least one round trip per fragment of every message. Known
            # in advance, so that a first point plans batches it can finish instead of being killed.
            return self.args.count * math.ceil(size / PVMD_FRAGMENT_PAYLOAD) * self.rtt_s
        if not done:
            return None
        last = max(done, key=lambda r: int(r["size_bytes"]))
        scale = max(1.0, (size + FRAGMENT_BYTES) / (int(last["size_bytes"]) + FRAGMENT_BYTES))
        estimate = float(last["median_t_s"]) * self.args.count * scale
        if route == "mpi-default" and size + OPEN_MPI_HEADER_BYTES > OPEN_MPI_DEFAULT_EAGER_BYTES:
            transfer_s = size * 8 / self.rate_bit_s if self.rate_bit_s > 0 else 0.0
            estimate = max(estimate, self.args.count * (self.rtt_s + transfer_s))
        return estimate

    def plan_batches(self, route, size):
        """(batches, note) within the point budget; batches 0 means skip."""
        estimate = self.estimate_batch_s(route, size)
        wanted, minimum = self.args.batches, self.args.warmup + 1
        budget = self.args.point_budget - STARTUP_ROUND_TRIPS * self.rtt_s
        if estimate is None or estimate * wanted <= budget:
            return wanted, ""
        if estimate * minimum > budget:
            return 0, (f"skipped: one batch would take ~{estimate:.0f} s, {minimum} batches exceed "
                       f"the point budget of {self.args.point_budget:g} s (--point-budget)")
        batches = int(budget // estimate)
        return batches, f"{batches} of {wanted} batches (budget {self.args.point_budget:g} s, ~{estimate:.0f} s per batch)"

    def bench_command(self, route, size, batches):
        estimate = self.estimate_batch_s(route, size) or self.args.point_budget
        timeout = max(MIN_BATCH_TIMEOUT_S, BATCH_TIMEOUT_FACTOR * estimate)
        if route in MPI_ROUTES:
            return self.mpi_bench_command(route, size, batches, timeout)
        argv = [PVM_SITES, "exec", "a"]
        if route == "longpipe":
            argv += ["--preload", LIBLONGPIPE]
        argv += [LP_BENCH, "--worker-exe", os.path.basename(LP_BENCH),
                 "--route", "direct" if route == "direct" else "default",
                 "--count", str(self.args.count), "--size", str(size), "--ack", self.args.ack,
                 "--encoding", self.args.encoding, "--batches", str(batches), "--timeout", f"{timeout:.0f}"]
        return argv, timeout * batches + MIN_BATCH_TIMEOUT_S

    def mpi_bench_command(self, route, size, batches, timeout):
        """lp-mpi-bench with one rank per site (rank 0 on site-a sends), under the route's settings."""
        job_timeout = timeout * batches + MIN_BATCH_TIMEOUT_S
        argv = [MPI_SITES, "--timeout", f"{job_timeout:.0f}"]
        if route == "mpi-tuned":
            for key, value in MPI_TUNED_MCA:
                argv += ["--mca", key, str(value)]
        if route == "mpi-longpipe":
            argv += ["--preload", LIBLONGPIPE]
        argv += [LP_MPI_BENCH, "--count", str(self.args.count), "--size", str(size), "--ack", self.args.ack,
                 "--send", self.args.send, "--batches", str(batches), "--timeout", f"{timeout:.0f}"]
        return argv, job_timeout + MPI_STOP_GRACE_S


def library_defines(path, symbol):
    """True when the shared library at path exports symbol (nm -D, binutils)."""
    result = subprocess.run(["nm", "-D", "--defined-only", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    # A name may carry its version node (MPI_Send@@LONGPIPE_0).
    return any(line.split()[-1].split("@")[0] == symbol for line in result.stdout.splitlines() if line.strip())
