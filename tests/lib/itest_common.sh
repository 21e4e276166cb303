# shellcheck shell=bash
# Shell helpers shared by the bash integration tests (sourced, not run). One copy, so that every
# test reports, finds the link and cleans up the same way. Needs bash; fine under set -euo pipefail.

# One failure format across all tests: ctest's log is read by grepping for "FAIL:".
fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
# Progress on stderr, so that it never mixes into output a test captures or compares.
say() { echo "== $*" >&2; }

# netem/wan: the one ctest passes (LONGPIPE_WAN, the fixture's tree), else this tree's.
# shellcheck disable=SC2034  # WAN and BUILD are for the tests that source this file
WAN=${LONGPIPE_WAN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../netem" && pwd)/wan}

# need_build_dir: BUILD is the build tree ctest passes in; run by hand without it, the test stops
# here with a clear message instead of failing later on a missing binary.
# shellcheck disable=SC2034
need_build_dir() { BUILD=${LONGPIPE_BUILD_DIR:?LONGPIPE_BUILD_DIR must name the build tree}; }

# Processes a test starts in the background: it adds each PID to PIDS, and with
# `trap itest_cleanup EXIT` they are killed however the test ends (a failed assertion exits at
# once), so that none outlives it and holds a port or a namespace. A test with more to undo first
# (an outage to lift, stopped processes to resume) defines cleanup_first. WORK, when set, is
# removed last.
PIDS=()
itest_cleanup() {
  local pid
  if declare -F cleanup_first >/dev/null; then cleanup_first; fi
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -z ${WORK:-} ]] || rm -rf "$WORK"
}

# remove_work_unless_failed STATUS: a failed test keeps WORK for the post-mortem, a passing one
# leaves nothing behind.
remove_work_unless_failed() {
  if (($1 != 0)); then echo "(work files kept in $WORK)" >&2; else rm -rf "$WORK"; fi
}

# wait_for_server NAME: until the lp-perf server whose output is $WORK/NAME.out listens, or fail
# (a server that never came up would otherwise show as a confusing client failure).
wait_for_server() {
  local out=$WORK/$1.out
  for _ in $(seq 1 100); do
    grep -q 'serving on' "$out" 2>/dev/null && break
    sleep 0.1
  done
  grep -q 'serving on' "$out" || { cat "$out" >&2; fail "lp-perf serve ($1) did not start"; }
}
