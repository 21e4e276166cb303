#!/usr/bin/env bash
# transcripts.sh MODE SCENARIO: runs plain MPI programs with and without LD_PRELOAD=liblongpipe.so
# and requires the same transcript, and (with the MPI front end in the library) that LongPipe
# carried the inter-site messages.
#
#   MODE      local     mpirun on this host, 4 ranks; with the preload LONGPIPE_MPI_SITES=0,0,1,1
#                       makes ranks {0,1} and {2,3} two sites
#             two-site  apps/mpi-sites across the emulated link of the ctest fixture
#                       (LP_WAN_INSTANCE): ranks 0,1 on site-a, 2,3 on site-b; sites found by LongPipe
#   SCENARIO  c         tests/mpi/mpi_semantics.c (every point-to-point rule)
#             fortran   tests/mpi/mpi_semantics.f90 (every interposed call through `use mpi`)
#             fortran08 tests/mpi/mpi_semantics_f08.f90 (`use mpi_f08`, ierror left out)
#             unreachable-return, unreachable-fatal
#                       (with the MPI front end only) mpi_semantics.f90's rank 2 stops answering: the
#                       failure reaches the Fortran `ierror` (MPI_ERRORS_RETURN), or LongPipe aborts
#                       the job naming the peer (MPI_ERRORS_ARE_FATAL)
#             abort-c, abort-fortran
#                       MPI_Abort(MPI_COMM_WORLD, 3) from rank 0: same exit status and output
#             mumps     Debian's precompiled MUMPS examples (mumps-test: dsimpletest, zsimpletest,
#                       Fortran, point-to-point with wildcards), which nobody here wrote or rebuilt
#
# Environment: LONGPIPE_LIBRARY (liblongpipe.so), MPI_SEMANTICS_C, MPI_SEMANTICS_F and
# MPI_SEMANTICS_F08 (the test programs), LONGPIPE_MPI_FRONT_END=1 when the library has the MPI C front end (then LongPipe's
# statistics must show the inter-site traffic).
set -euo pipefail

MODE=${1:?usage: transcripts.sh local|two-site c|fortran|abort-c|abort-fortran|mumps}
SCENARIO=${2:?usage: transcripts.sh local|two-site c|fortran|abort-c|abort-fortran|mumps}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
FRONT_END=${LONGPIPE_MPI_FRONT_END:-0}
MPI_SITES=$ROOT/apps/mpi-sites/mpi-sites
readonly RANKS=4
# The site of each rank: forced in local mode (LONGPIPE_MPI_SITES of the MPI front end); across
# the emulated sites mpi-sites' block placement puts ranks 0,1 on site-a and 2,3 on site-b.
readonly LOCAL_SITES=0,0,1,1
readonly SITES=0,0,1,1
# How long one run may take before it counts as hung.
readonly RUN_SECONDS=180
# The exit status MPI_Abort asks for in the abort scenarios.
readonly ABORT_STATUS=3
# mpi_semantics.c: rank 0 receives 30 messages from each of ranks 2 and 3 (the other site) in its
# first phase alone; across the sites it must have received at least that many over LongPipe.
# (mpi_semantics.f90: 10 each and more later, so 20 there; mpi_semantics_f08.f90: 8 each and more, so 24.)
readonly MIN_INTER_SITE_TO_RANK0=60
readonly MUMPS=/usr/lib/mumps

# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"

# A sanitizer build of the library needs its runtime loaded first (the MPI programs are not
# instrumented); leak reports from Open MPI are not LongPipe's to judge.
ASAN_RUNTIME=$(ldd "$LIBRARY" | awk '/libasan/ {print $3}')
PRELOAD=$LIBRARY
if [[ -n $ASAN_RUNTIME ]]; then
  [[ $MODE == two-site ]] && fail "two-site runs need a library built without sanitizers (mpi-sites preloads one library)"
  PRELOAD="$ASAN_RUNTIME $LIBRARY"
  export ASAN_OPTIONS=detect_leaks=0
fi

# Extra NAME=VALUE settings for every rank of the runs to come.
JOB_ENV=()

WORK=$(mktemp -d /tmp/lp-mpi-transcripts.XXXXXX)
unset LD_PRELOAD
cleanup() {
  local status=$?
  remove_work_unless_failed "$status"
  exit "$status"
}
trap cleanup EXIT

# run NAME PRELOAD(yes|no) INPUT PROGRAM ARGS...: one 4-rank job; stdout -> NAME.out, stderr ->
# NAME.err, exit status -> NAME.status. Each rank of a preloaded run writes its LongPipe statistics
# to NAME.stats.RANK.json (the MPI front end puts the world rank in place of %r).
run() {
  local name=$1 preload=$2 input=$3; shift 3
  local -a env_args=("${JOB_ENV[@]}")
  if [[ $preload == yes ]]; then
    env_args+=(LONGPIPE_STATS="$WORK/$name.stats.%r.json")
    [[ $MODE == local ]] && env_args+=(LONGPIPE_MPI_SITES="$LOCAL_SITES")
  fi
  say "run $name (preload $preload): $*"
  local status=0
  case $MODE in
    local)
      local -a mpirun_env=()
      local setting
      for setting in "${env_args[@]}"; do mpirun_env+=(-x "$setting"); done
      [[ $preload == yes ]] && mpirun_env+=(-x "LD_PRELOAD=$PRELOAD")
      [[ -n $ASAN_RUNTIME ]] && mpirun_env+=(-x ASAN_OPTIONS)
      timeout "$RUN_SECONDS" mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl tcp,self \
        --mca mpi_yield_when_idle 1 -np "$RANKS" "${mpirun_env[@]}" "$@" \
        <"$input" >"$WORK/$name.out" 2>"$WORK/$name.err" || status=$? ;;
    two-site)
      # mpi-sites passes every LONGPIPE_* variable of its caller on to the ranks.
      local -a site_args=()
      [[ $preload == yes ]] && site_args=(--preload "$LIBRARY")
      env "${env_args[@]}" "$MPI_SITES" -n $((RANKS / 2)) --placement block --timeout "$RUN_SECONDS" \
        --mca mpi_yield_when_idle 1 "${site_args[@]}" -- "$@" \
        <"$input" >"$WORK/$name.out" 2>"$WORK/$name.err" || status=$? ;;
    *) fail "unknown mode $MODE" ;;
  esac
  echo "$status" >"$WORK/$name.status"
}

expect_clean_run() {
  local status
  status=$(cat "$WORK/$1.status")
  ((status == 0)) || { tail -30 "$WORK/$1.err" >&2; fail "$1 exited with status $status"; }
}

# compare PLAIN LONGPIPE [NORMALIZE]: the same transcript with and without LongPipe.
# shellcheck source=../transcript_compare.sh
source "$HERE/../transcript_compare.sh"

# With the MPI front end in the library, LongPipe must have carried messages across the sites and
# none inside a site (longpipe_statistics.py), rank 0 having received at least MIN of them.
require_longpipe_traffic() {
  local name=$1 min_to_rank0=${2:-0}
  if [[ $FRONT_END != 1 ]]; then
    say "$name: the library has no MPI C front end (lp_mpi): LongPipe traffic not required"
    return 0
  fi
  /usr/bin/python3 "$HERE/longpipe_statistics.py" "$WORK/$name.stats.%r.json" "$SITES" --rank0-received "$min_to_rank0" ||
    fail "$name: LongPipe's statistics do not show the inter-site traffic"
}

# require_site_collectives NAME LIST: every rank's collective statistics show each collective of
# LIST (comma-separated) on the site path at least once (the program's own collectives crossed
# the link through LongPipe's two-level algorithms, libshim/mpi/collectives.h).
require_site_collectives() {
  local name=$1 list=$2
  [[ $FRONT_END == 1 ]] || return 0
  /usr/bin/python3 - "$WORK/$name.stats" "$RANKS" "$list" <<'PY' || fail "$name: the collectives did not take the site path"
import json, sys
prefix, ranks, wanted = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
for rank in range(ranks):
    path = f"{prefix}.{rank}.json.collectives"
    try:
        counts = json.load(open(path))["collectives"]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"rank {rank}: no collective statistics ({path}: {error})")
    for name in wanted:
        if counts.get(name, {}).get("site", 0) < 1:
            sys.exit(f"rank {rank}: {name} never took the site path: {counts.get(name)}")
    if rank == 0:
        used = {n: c for n, c in counts.items() if c["site"] + c["native"] > 0}
        print(f"== rank 0 collectives: {used}", file=sys.stderr)
PY
}

# --- scenarios --------------------------------------------------------------------------------

# scenario_semantics PROGRAM [MIN]: MIN messages rank 0 must have received over LongPipe.
scenario_semantics() {
  local program=$1 min_to_rank0=${2:-$MIN_INTER_SITE_TO_RANK0}
  run plain no /dev/null "$program"
  expect_clean_run plain
  grep -q '^done$' "$WORK/plain.out" || fail "the plain run did not finish its script"
  if grep -q 'FAILED\|WRONG' "$WORK/plain.out"; then fail "the plain run broke a rule: $(grep -m1 'FAILED\|WRONG' "$WORK/plain.out")"; fi
  run longpipe yes /dev/null "$program"
  expect_clean_run longpipe
  compare plain longpipe
  require_longpipe_traffic longpipe "$min_to_rank0"
}

scenario_abort() {
  local program=$1
  run plain no /dev/null "$program" abort
  run longpipe yes /dev/null "$program" abort
  local plain_status longpipe_status
  plain_status=$(cat "$WORK/plain.status")
  longpipe_status=$(cat "$WORK/longpipe.status")
  ((plain_status == ABORT_STATUS)) || fail "plain MPI_Abort(.., $ABORT_STATUS) ended the job with status $plain_status"
  ((longpipe_status == plain_status)) || { tail -20 "$WORK/longpipe.err" >&2; fail "with LongPipe MPI_Abort ended the job with status $longpipe_status, without $plain_status"; }
  compare plain longpipe
}

# MUMPS solves a 5 x 5 system (its example input) on 4 ranks; the solution is 1 2 3 4 5.
scenario_mumps() {
  local arithmetic input
  for arithmetic in d z; do
    input=$MUMPS/input_simpletest_real
    [[ $arithmetic == z ]] && input=$MUMPS/input_simpletest_cmplx
    run "$arithmetic-plain" no "$input" "$MUMPS/${arithmetic}simpletest"
    expect_clean_run "$arithmetic-plain"
    run "$arithmetic-longpipe" yes "$input" "$MUMPS/${arithmetic}simpletest"
    expect_clean_run "$arithmetic-longpipe"
    local name
    for name in "$arithmetic-plain" "$arithmetic-longpipe"; do
      # The solution, rounded to 6 digits; complex entries as (re,im).
      grep -A1 'Solution is' "$WORK/$name.out" | tr -d '()' | tr ', ' '\n\n' | grep -E '^-?[0-9]' |
        awk '{printf "%.6f\n", $1}' | paste -sd' ' >"$WORK/$name.solution"
      say "$name solution: $(cat "$WORK/$name.solution")"
    done
    local expected="1.000000 2.000000 3.000000 4.000000 5.000000"
    [[ $arithmetic == z ]] && expected="1.000000 0.000000 2.000000 0.000000 3.000000 0.000000 4.000000 0.000000 5.000000 0.000000"
    [[ $(cat "$WORK/$arithmetic-plain.solution") == "$expected" ]] || fail "${arithmetic}simpletest without LongPipe: wrong solution"
    [[ $(cat "$WORK/$arithmetic-longpipe.solution") == "$expected" ]] || fail "${arithmetic}simpletest with LongPipe: wrong solution $(cat "$WORK/$arithmetic-longpipe.solution")"
    require_longpipe_traffic "$arithmetic-longpipe"
    require_site_collectives "$arithmetic-longpipe" MPI_Bcast,MPI_Reduce,MPI_Allreduce
  done
}

# mpi_semantics.f90 unreachable-HANDLER under the preload, with short liveness timers so that the
# engine gives the stopped rank up within the program's patience.
scenario_unreachable() {
  local handler=$1
  [[ $FRONT_END == 1 ]] || fail "the unreachable peer needs the MPI C front end in the library"
  # A stopped rank's host still answers TCP, so the engine sees a silent path, not a refusal: it
  # gives the peer up after LONGPIPE_SILENT_PATH_MS (docs/engine/faults.md).
  JOB_ENV=(LONGPIPE_KEEPALIVE_MS=200 LONGPIPE_DEAD_PEER_MS=1500 LONGPIPE_SILENT_PATH_MS=2000)
  run stopped yes /dev/null "${MPI_SEMANTICS_F:?}" "unreachable-$handler"
  local status
  status=$(cat "$WORK/stopped.status")
  cat "$WORK/stopped.out" >&2
  ((status != 0)) || fail "the job did not fail"
  ((status != 124 && status != 137)) || fail "the job hung instead of reporting the stopped peer"
  if [[ $handler == return ]]; then
    grep -q '^send to the stopped rank: failed (class MPI_ERR_OTHER)$' "$WORK/stopped.out" ||
      { tail -20 "$WORK/stopped.err" >&2; fail "MPI_ERRORS_RETURN did not return MPI_ERR_OTHER to the Fortran ierror"; }
  else
    grep -Eq 'liblongpipe: MPI rank 0: MPI rank 2 \([^)]+:[0-9]+\) is unreachable.*aborting' "$WORK/stopped.err" ||
      { tail -20 "$WORK/stopped.err" >&2; fail "no abort naming the unreachable peer"; }
    ! grep -q 'send to the stopped rank' "$WORK/stopped.out" || fail "MPI_ERRORS_ARE_FATAL returned to the program"
  fi
  say "reported: $(grep -m1 -h 'stopped rank\|unreachable' "$WORK/stopped.out" "$WORK/stopped.err")"
}

case $SCENARIO in
  c) scenario_semantics "${MPI_SEMANTICS_C:?MPI_SEMANTICS_C must name mpi_semantics}" ;;
  fortran) scenario_semantics "${MPI_SEMANTICS_F:?MPI_SEMANTICS_F must name mpi_semantics_f}" 20 ;;
  fortran08) scenario_semantics "${MPI_SEMANTICS_F08:?MPI_SEMANTICS_F08 must name mpi_semantics_f08}" 24 ;;
  abort-c) scenario_abort "${MPI_SEMANTICS_C:?}" ;;
  abort-fortran) scenario_abort "${MPI_SEMANTICS_F:?}" ;;
  mumps) scenario_mumps ;;
  unreachable-return) scenario_unreachable return ;;
  unreachable-fatal) scenario_unreachable fatal ;;
  *) fail "unknown scenario $SCENARIO" ;;
esac
say "PASS $MODE $SCENARIO"
