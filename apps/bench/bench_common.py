"""What the benchmark drivers (apps/bench/run, apps/bench/sweep) share: where the checkout's tools and
the build are, their messages, the signals that stop a run, and running a tool that must succeed.

Each driver names itself (bench, sweep) in its messages and its errors; the rest is the same code, so
that the drivers find the build and stop on a signal the same way.
"""

import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD_DIR = os.environ.get("LONGPIPE_BUILD_DIR", os.path.join(ROOT, "build"))
WAN = os.environ.get("LONGPIPE_WAN", os.path.join(ROOT, "netem", "wan"))


def speaker(program):
    """say(text) for a driver: one line on stderr with the driver's name in front."""
    def say(text):
        print(f"{program}: {text}", file=sys.stderr, flush=True)
    return say


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted(f"signal {signal.Signals(signum).name}")


def stop_on_signals():
    """SIGTERM, SIGHUP and SIGINT raise Interrupted, so that the driver's teardown runs."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, on_signal)


def check_can_run(program, programs):
    """Exits with the driver's message unless it runs as root and every (path, what) exists."""
    if os.geteuid() != 0:
        raise SystemExit(f"{program}: needs root (network namespaces)")
    for path, what in programs:
        if not os.path.exists(path):
            raise SystemExit(f"{program}: {what} not found at {path} (run ./longpipe build, or set LONGPIPE_BUILD_DIR)")


def run_tool(argv, env, timeout):
    """Runs a set-up tool (netem/wan, pvm-sites) to its end; its output, or RuntimeError with it."""
    result = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{result.stdout}")
    return result.stdout
