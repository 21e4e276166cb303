#!/usr/bin/env bash
# run_comparison.sh MODE SCENARIO: runs plain PVM programs with and without LD_PRELOAD of
# liblongpipe.so and requires the same results, and that LongPipe really carried messages.
#
#   MODE      local     one pvmd in this namespace, with its own PVM_TMP (no emulated link)
#             two-site  apps/pvm-sites across the emulated link of the ctest fixture
#                       (LP_WAN_INSTANCE); workers run on site-b, the master on site-a
#   SCENARIO  semantics        tests/pvm/pvm_semantics (every encoding, wildcards, psend/precv,
#                              mcast, a task without LongPipe, pvm_notify, ...)
#             debian-examples  precompiled programs of Debian's pvm-examples (master1/slave1,
#                              hello/hello_other, gexample), which nobody here wrote or rebuilt
#             vanished-peer    a worker killed while messages to it are under way: same results,
#                              and LongPipe reports the vanished peer instead of waiting on it
#             bad-config       a bad LONGPIPE_* value, a misspelt name: the program fails and the error
#                              names it (and, misspelt, the nearest known name)
#
# Environment: LONGPIPE_LIBRARY (liblongpipe.so), PVM_SEMANTICS (the test program).
set -euo pipefail

MODE=${1:?usage: run_comparison.sh local|two-site SCENARIO}
SCENARIO=${2:?usage: run_comparison.sh local|two-site semantics|debian-examples|bad-config}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
PROGRAM=${PVM_SEMANTICS:?PVM_SEMANTICS must name the pvm_semantics program}
PVM_SITES=$ROOT/apps/pvm-sites/pvm-sites
# Where Debian installs the example programs spawned by name (PVM's ep=).
readonly EXAMPLES_DIR=/usr/bin
# How long one run may take before it counts as hung (the pvmd route over the link is slow).
readonly RUN_SECONDS=240
readonly PVMD_START_SECONDS=15

# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"

# A sanitizer build of the library needs its runtime loaded first, also into programs that are not
# instrumented (Debian's); leak reports from libpvm3 itself are not LongPipe's to judge.
# Two-site runs go through sites_exec_preloaded.sh, which does the same inside the site.
PRELOADED=$(cd "$(dirname "$0")/.." && pwd)/sites_exec_preloaded.sh
# The same holds for TSan's runtime (the front end's tests also run in the TSan build).
SANITIZER_RUNTIME=$(ldd "$LIBRARY" | awk '/lib(asan|tsan)/ {print $3}')
PRELOAD=$LIBRARY
if [[ -n $SANITIZER_RUNTIME ]]; then
  PRELOAD="$SANITIZER_RUNTIME $LIBRARY"
  export ASAN_OPTIONS=detect_leaks=0 PVM_EXPORT=${PVM_EXPORT:+$PVM_EXPORT:}ASAN_OPTIONS:TSAN_OPTIONS
fi

WORK=$(mktemp -d /tmp/lp-pvm-test.XXXXXX)
PVMD_PID=""
unset LD_PRELOAD


# --- the virtual machine ----------------------------------------------------------------------

start_vm() {
  case $MODE in
    local)
      export PVM_ROOT=/usr/lib/pvm3 PVM_ALLOW_ROOT=1 PVM_TMP=$WORK/pvm
      mkdir -p "$PVM_TMP"
      printf '* ep=%s\n%s\n' "$EXAMPLES_DIR" "$(hostname)" >"$WORK/hostfile"
      pvmd "$WORK/hostfile" </dev/null >"$WORK/pvmd.out" 2>&1 &
      PVMD_PID=$!
      for ((i = 0; i < PVMD_START_SECONDS * 10; i++)); do
        [[ -e $PVM_TMP/pvmd.$(id -u) ]] && return 0
        sleep 0.1
      done
      fail "pvmd did not start: $(cat "$WORK/pvmd.out")" ;;
    two-site)
      "$PVM_SITES" up --ep "$EXAMPLES_DIR" >&2 ;;
    *) fail "unknown mode $MODE" ;;
  esac
}

stop_vm() {
  case $MODE in
    local)
      if [[ -n $PVMD_PID ]] && kill -0 "$PVMD_PID" 2>/dev/null; then
        (echo halt | timeout 10 pvm) >/dev/null 2>&1 || true
        for ((i = 0; i < 50; i++)); do kill -0 "$PVMD_PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$PVMD_PID" 2>/dev/null || true
      fi ;;
    two-site)
      "$PVM_SITES" down >&2 || true ;;
  esac
}

cleanup() {
  local status=$?
  stop_vm
  remove_work_unless_failed "$status"
  exit "$status"
}
trap cleanup EXIT

# run_master NAME PRELOAD(yes|no) CMD...: runs CMD as the job's first task; stdout -> NAME.out,
# stdin from $WORK/NAME.in if that exists (else nothing: an interactive program must not spin).
run_master() {
  local name=$1 preload=$2; shift 2
  local input=/dev/null
  [[ -e $WORK/${name%-*}.in ]] && input=$WORK/${name%-*}.in
  local -a env_args=()
  if [[ $preload == yes ]]; then env_args+=(LONGPIPE_STATS="$WORK/$name.stats.json"); fi
  say "run $name (preload $preload): $*"
  case $MODE in
    local)
      [[ $preload == yes ]] && env_args+=(LD_PRELOAD="$PRELOAD")
      env "${env_args[@]}" timeout "$RUN_SECONDS" "$@" <"$input" >"$WORK/$name.out" 2>"$WORK/$name.err" ;;
    two-site)
      local -a site_exec=("$PVM_SITES" exec a)
      [[ $preload == yes ]] && site_exec=("$PRELOADED" "$PVM_SITES" a "$LIBRARY")
      env "${env_args[@]}" timeout "$RUN_SECONDS" "${site_exec[@]}" "$@" \
        <"$input" >"$WORK/$name.out" 2>"$WORK/$name.err" ;;
  esac
}

# compare PLAIN LONGPIPE [NORMALIZE]: the same transcript with and without LongPipe.
# shellcheck source=../transcript_compare.sh
source "$HERE/../transcript_compare.sh"

# LongPipe carried messages for the first task (its LONGPIPE_STATS file): both ways, or (for a
# program whose first messages go out before its tasks are up) at least one way.
require_longpipe_traffic() {
  local stats=$WORK/$1.stats.json directions=${2:-both}
  [[ -s $stats ]] || fail "$1 wrote no LongPipe statistics ($stats)"
  local sent received
  sent=$(grep -o '"messages_sent":[0-9]*' "$stats" | awk -F: '{s += $2} END {print s + 0}')
  received=$(grep -o '"messages_received":[0-9]*' "$stats" | awk -F: '{s += $2} END {print s + 0}')
  say "$1: LongPipe sessions carried $sent message(s) out, $received in"
  if [[ $directions == both ]]; then
    ((sent > 0 && received > 0)) || fail "$1: LongPipe did not carry messages both ways (sent $sent, received $received)"
  else
    ((sent + received > 0)) || fail "$1: LongPipe carried no messages"
  fi
}

# The master of pvm_semantics sends worker B exactly this many messages (its role, right after
# pvm_spawn; the multicast; the go-ahead to exit). B starts at once, so with the front end's wait for
# a freshly spawned task's directory entry all of them, the first included, go over LongPipe.
readonly MASTER_TO_B_MESSAGES=3

# require_session_with_messages NAME COUNT WHY: one of NAME's LongPipe sessions sent exactly COUNT
# messages (else fail with WHY).
require_session_with_messages() {
  local stats=$WORK/$1.stats.json
  /usr/bin/python3 -c 'import json, sys
sent = [s["messages_sent"] for s in json.load(open(sys.argv[1]))["sessions"]]
print("sessions sent", sent, file=sys.stderr)
sys.exit(0 if int(sys.argv[2]) in sent else 1)' "$stats" "$2" || fail "$1: $3"
}

expect_clean_run() {
  local name=$1 status=$2
  ((status == 0)) || { cat "$WORK/$name.err" >&2; fail "$name exited with status $status"; }
}

# --- scenarios --------------------------------------------------------------------------------

scenario_semantics() {
  local -a where=()
  [[ $MODE == two-site ]] && where=(site-b)
  local status=0
  run_master plain no "$PROGRAM" "${where[@]}" || status=$?
  expect_clean_run plain "$status"
  grep -q '^master: done$' "$WORK/plain.out" || fail "the plain run did not finish its script"
  status=0
  run_master longpipe yes "$PROGRAM" "${where[@]}" || status=$?
  expect_clean_run longpipe "$status"
  compare plain longpipe
  require_longpipe_traffic longpipe
  # Local only: across the sites every task inherits LONGPIPE_STATS through pvm-sites, so the file is
  # whichever task wrote last.
  if [[ $MODE == local ]]; then
    require_session_with_messages longpipe "$MASTER_TO_B_MESSAGES" \
      "B's first message (sent right after pvm_spawn) did not go over LongPipe: the wait for a spawned task's directory entry did not work"
  fi
}

scenario_debian_examples() {
  local status=0
  # master1 mcasts to its slave1 tasks, which pass data around a ring and answer in any order.
  run_master master1-plain no /usr/bin/master1 || status=$?
  expect_clean_run master1-plain "$status"
  status=0
  run_master master1-longpipe yes /usr/bin/master1 || status=$?
  expect_clean_run master1-longpipe "$status"
  sort -o "$WORK/master1-plain.out" "$WORK/master1-plain.out"
  sort -o "$WORK/master1-longpipe.out" "$WORK/master1-longpipe.out"
  grep -q 'I got' "$WORK/master1-plain.out" || fail "master1 produced no results"
  compare master1-plain master1-longpipe
  require_longpipe_traffic master1-longpipe either
  # hello spawns hello_other, which answers with a string naming its host; task ids and the host
  # PVM places hello_other on (round robin) differ from run to run.
  status=0
  run_master hello-plain no /usr/bin/hello.pvm || status=$?
  expect_clean_run hello-plain "$status"
  status=0
  run_master hello-longpipe yes /usr/bin/hello.pvm || status=$?
  expect_clean_run hello-longpipe "$status"
  grep -q 'hello, world' "$WORK/hello-plain.out" || fail "hello produced no greeting"
  compare hello-plain hello-longpipe 's/t[0-9a-f]\{5,8\}/tTID/g; s/world from .*/world from HOST/'
  # gexample: a 10 x 10 Toeplitz matrix over 4 tasks in a PVM group (pvmgs, barrier, broadcast,
  # reductions through libgpvm3); it prints the results next to what they should be.
  printf '10\n4\n' >"$WORK/gexample.in"
  status=0
  run_master gexample-plain no /usr/bin/gexample || status=$?
  expect_clean_run gexample-plain "$status"
  status=0
  run_master gexample-longpipe yes /usr/bin/gexample || status=$?
  expect_clean_run gexample-longpipe "$status"
  grep -q 'The 1-Norm is 55' "$WORK/gexample-plain.out" || fail "gexample computed a wrong norm without LongPipe"
  compare gexample-plain gexample-longpipe
  require_longpipe_traffic gexample-longpipe either
}

scenario_vanished_peer() {
  local -a where=()
  [[ $MODE == two-site ]] && where=(site-b)
  # Short liveness timers so that the engine gives the killed worker up within the program's wait.
  export LONGPIPE_DEAD_PEER_MS=2000 LONGPIPE_KEEPALIVE_MS=500
  local status=0
  run_master vanish-plain no "$PROGRAM" vanish "${where[@]}" || status=$?
  expect_clean_run vanish-plain "$status"
  grep -q '^vanish: done$' "$WORK/vanish-plain.out" || fail "the plain run did not finish"
  status=0
  run_master vanish-longpipe yes "$PROGRAM" vanish "${where[@]}" || status=$?
  expect_clean_run vanish-longpipe "$status"
  compare vanish-plain vanish-longpipe
  grep -q 'failed (no sign of life.*LONGPIPE_DEAD_PEER_MS' "$WORK/vanish-longpipe.err" ||
    { cat "$WORK/vanish-longpipe.err" >&2; fail "the vanished peer was not reported"; }
  say "reported: $(grep -m1 'failed (' "$WORK/vanish-longpipe.err")"
}

scenario_bad_config() {
  local status=0
  LONGPIPE_WINDOW_MESSAGES=banana run_master bad yes "$PROGRAM" || status=$?
  ((status != 0)) || fail "a task with LONGPIPE_WINDOW_MESSAGES=banana ran as if nothing were wrong"
  grep -q 'LONGPIPE_WINDOW_MESSAGES' "$WORK/bad.err" || { cat "$WORK/bad.err" >&2; fail "the error does not name the variable"; }
  say "bad value refused: $(grep -m1 LONGPIPE_WINDOW_MESSAGES "$WORK/bad.err")"
  # A misspelt name is refused too, with the nearest known one.
  status=0
  LONGPIPE_WINDOW_MESAGES=10 run_master misspelt yes "$PROGRAM" || status=$?
  ((status != 0)) || fail "a task with LONGPIPE_WINDOW_MESAGES ran as if nothing were wrong"
  grep -q 'LONGPIPE_WINDOW_MESAGES is not a LongPipe setting; did you mean LONGPIPE_WINDOW_MESSAGES?' "$WORK/misspelt.err" ||
    { cat "$WORK/misspelt.err" >&2; fail "the error does not name the variable and suggest LONGPIPE_WINDOW_MESSAGES"; }
  say "misspelt name refused: $(grep -m1 LONGPIPE_WINDOW_MESAGES "$WORK/misspelt.err")"
}

start_vm
case $SCENARIO in
  semantics) scenario_semantics ;;
  debian-examples) scenario_debian_examples ;;
  vanished-peer) scenario_vanished_peer ;;
  bad-config) scenario_bad_config ;;
  *) fail "unknown scenario $SCENARIO" ;;
esac
say "PASS $MODE $SCENARIO"
