#!/usr/bin/env bash
# run_app.sh APP: a third-party MPI program, precompiled by Debian, across the two emulated sites
# (apps/mpi-sites, the ctest fixture's link: LP_WAN_INSTANCE), 2 ranks per site (ranks 0,1 on
# site-a, 2,3 on site-b; NetPIPE: 1 per site); once with Open MPI alone and once with --preload
# liblongpipe.so. The results must agree (timing lines and columns dropped; tolerances only where the program prints
# sums whose last digit may follow the order of the additions), and LongPipe's statistics must show
# that it carried the inter-site messages (longpipe_statistics.py).
#
#   APP  lammps         lmp (lammps): inputs/lammps_lj.in, Lennard-Jones liquid, 2048 atoms, 30
#                       steps, load balancing, a dump; the log and the radial distribution
#                       compared, values within a relative 1e-6; the dump exactly
#        scalapack-qr   xdqr (scalapack-mpi-test, Open MPI build): inputs/QR.dat, QR and LQ
#                       factorizations on a 2 x 2 grid; the test table compared, residuals within 0.1
#                       (printed with one decimal), every check PASSED
#        scalapack-llt  xdllt: inputs/LLT.dat, Cholesky factorization and solve, 2 x 2 grid;
#                       compared exactly but for the time columns, every check PASSED
#        netpipe        NPopenmpi (netpipe-openmpi), one rank per site, in its integrity-check
#                       mode (-i) with wildcard receives (-z): 28 sizes from 1 byte to 48 KiB, 5
#                       round trips each; the checks and its np.out compared exactly
#        mumps-laplace  dsimpletest (mumps-test) fed a 900-unknown 2D Laplacian of
#                       mumps_laplace.py; MUMPS's statistics compared exactly, the solution within
#                       1e-9 of the exact one and of the other run's
#
# A run that does not finish within RUN_SECONDS fails as hung; shortly before that, the stacks of
# the program's ranks (gdb) go to stderr, so that the log names the MPI call each rank waits in.
# Environment: LONGPIPE_LIBRARY (liblongpipe.so), LP_WAN_INSTANCE (ctest's fixture),
# LONGPIPE_APP_SECONDS (optional: RUN_SECONDS).
set -euo pipefail

APP=${1:?usage: run_app.sh lammps|scalapack-qr|scalapack-llt|netpipe|mumps-laplace}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
MPI_SITES=$ROOT/apps/mpi-sites/mpi-sites
# Ranks per site and the site of each rank (NetPIPE is a pair: one rank per site).
RANKS_PER_SITE=2 SITES=0,0,1,1
# One run takes seconds on the test link; past RUN_SECONDS it counts as hung. The stacks are
# taken STACK_SECONDS before that (gdb attaching to four ranks takes a while on a busy machine).
# LONGPIPE_APP_SECONDS replaces RUN_SECONDS (a shorter one to try the hang report by hand).
readonly RUN_SECONDS=${LONGPIPE_APP_SECONDS:-150}
readonly STACK_SECONDS=$((RUN_SECONDS > 100 ? 50 : RUN_SECONDS / 2))
readonly SCALAPACK_TESTS=/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests

# shellcheck source=../../lib/itest_common.sh
source "$HERE/../../lib/itest_common.sh"

[[ -n ${LP_WAN_INSTANCE:-} ]] || fail "LP_WAN_INSTANCE is not set: run this test through ctest (fixture mpi-apps-wan)"
! ldd "$LIBRARY" | grep -q libasan || fail "two-site runs need a library built without sanitizers (mpi-sites preloads one library)"
unset LD_PRELOAD

WORK=$(mktemp -d /tmp/lp-mpi-apps.XXXXXX)
WATCHDOG=
cleanup() {
  local status=$?
  [[ -z $WATCHDOG ]] || kill "$WATCHDOG" 2>/dev/null || true
  remove_work_unless_failed "$status"
  exit "$status"
}
trap cleanup EXIT

# need PROGRAM PACKAGE: the precompiled program is installed, or a clear failure.
need() {
  [[ -x $1 ]] || fail "$1 is missing: install the Debian package $2 (debian-packages.txt)"
}

# descendants PID: every process below PID (mpi-sites, mpirun, the orteds, the ranks of both sites:
# the sites are network namespaces, not PID namespaces).
descendants() {
  local -a queue=("$1")
  local pid child
  while ((${#queue[@]})); do
    pid=${queue[0]}
    queue=("${queue[@]:1}")
    for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do
      echo "$child"
      queue+=("$child")
    done
  done
}

# stacks JOB PROGRAM: the threads' stacks of each rank of PROGRAM below JOB, and its kernel stack.
stacks() {
  local job=$1 program pid
  program=$(readlink -f "$2")
  for pid in $(descendants "$job"); do
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$program" ]] || continue
    echo "== stacks of $(basename "$program") PID $pid (a rank still running after $((RUN_SECONDS - STACK_SECONDS)) s):" >&2
    timeout 40 gdb -p "$pid" -batch -nx -ex 'thread apply all bt' 2>/dev/null | grep -E '^(Thread|#)' >&2 || true
    sed 's/^/   kernel: /' "/proc/$pid/stack" >&2 2>/dev/null || true
  done
}

# run NAME PRELOAD(yes|no) INPUT PROGRAM ARGS...: one job of 2 x RANKS_PER_SITE ranks, started in $WORK/NAME
# (holding copies of INPUT_FILES); standard input from INPUT; stdout -> NAME.out, stderr -> NAME.err.
# Fails on a hang or a non-zero exit status.
INPUT_FILES=()
run() {
  local name=$1 preload=$2 input=$3
  shift 3
  local dir=$WORK/$name
  mkdir -p "$dir"
  ((${#INPUT_FILES[@]} == 0)) || cp "${INPUT_FILES[@]}" "$dir/"
  local -a site_args=(-n "$RANKS_PER_SITE" --placement block --timeout "$RUN_SECONDS" --mca mpi_yield_when_idle 1)
  local -a env_args=()
  if [[ $preload == yes ]]; then
    site_args+=(--preload "$LIBRARY")
    env_args+=(LONGPIPE_STATS="$WORK/$name.stats.%r.json")
  fi
  say "$name: $(basename "$1") across the sites, preload $preload"
  local start=$SECONDS status=0 job
  (cd "$dir" && exec env "${env_args[@]}" "$MPI_SITES" "${site_args[@]}" -- "$@" \
     <"$input" >"$WORK/$name.out" 2>"$WORK/$name.err") &
  job=$!
  # The watchdog ends its sleep when it is told to end: an orphaned sleep would keep ctest's
  # output pipe open, and ctest waiting for it.
  (
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    sleep $((RUN_SECONDS - STACK_SECONDS)) &
    nap=$!
    wait "$nap"
    stacks "$job" "$1"
  ) &
  WATCHDOG=$!
  wait "$job" || status=$?
  kill "$WATCHDOG" 2>/dev/null || true
  wait "$WATCHDOG" 2>/dev/null || true
  WATCHDOG=
  if ((status == 124)); then
    tail -n 20 "$WORK/$name.out" "$WORK/$name.err" >&2
    fail "$name: $(basename "$1") did not finish within $RUN_SECONDS s: hung (the ranks' stacks are above)"
  fi
  ((status == 0)) || { tail -n 30 "$WORK/$name.out" "$WORK/$name.err" >&2; fail "$name: $(basename "$1") exited with status $status"; }
  say "$name: finished in $((SECONDS - start)) s"
}

# both PROGRAM ARGS...: the run without LongPipe (plain) and the one with it (longpipe).
both() {
  run plain no "$INPUT" "$@"
  run longpipe yes "$INPUT" "$@"
}

# normalize SED_PROGRAM: plain.out and longpipe.out without their timing lines or columns, as
# plain.txt and longpipe.txt.
normalize() {
  local name
  for name in plain longpipe; do
    sed -E "$1" "$WORK/$name.out" >"$WORK/$name.txt"
  done
}

# compare RELATIVE ABSOLUTE: the normalized transcripts, numbers within the tolerance.
compare() {
  python3 "$HERE/compare_numbers.py" "$WORK/plain.txt" "$WORK/longpipe.txt" --relative "$1" --absolute "$2" ||
    { diff "$WORK/plain.txt" "$WORK/longpipe.txt" | head -20 >&2; fail "$APP: the results with LongPipe differ from Open MPI's alone"; }
}

# traffic MIN_SENT: LongPipe carried inter-site messages both ways, none inside a site, and rank 0
# sent at least MIN_SENT of them.
traffic() {
  python3 "$HERE/../longpipe_statistics.py" "$WORK/longpipe.stats.%r.json" "$SITES" --rank0-sent "$1" ||
    fail "$APP: LongPipe's statistics do not show the inter-site traffic"
}

# require_line PATTERN: a line matching PATTERN (extended regex) in the output of both runs.
require_line() {
  local name
  for name in plain longpipe; do
    grep -Eq "$1" "$WORK/$name.out" || fail "$APP, $name run: no line matching '$1'"
  done
}

INPUT=/dev/null
case $APP in
  lammps)
    need /usr/bin/lmp lammps
    INPUT_FILES=("$HERE/inputs/lammps_lj.in")
    both /usr/bin/lmp -in lammps_lj.in -log none
    require_line '^Total wall time'
    # Thermo lines at steps 0, 10, 20 (first run), 20, 30 (second run).
    [[ $(grep -cE '^ +[0-9]+ +-?[0-9.]+ ' "$WORK/plain.out") -eq 5 ]] || fail "lammps: expected 5 thermo lines"
    # Dropped: the CPU times, the balancing time, loop time, performance and the timing breakdown.
    normalize '/CPU = |^ *rebalancing time:|^Loop time of|^Performance:|CPU use with|^Total wall time/d; /^(Pair|Neigh|Comm|Output|Modify|Other) +\|/d'
    # The thermo values are sums over the ranks (MPI_Allreduce) printed with 8 significant digits;
    # another order of the additions may move the last digit (a relative 1e-7 at most); a lost or
    # doubled contribution changes them by far more than 1e-6.
    compare 1e-6 1e-9
    # The radial distribution function (sums of whole counts, then normalized: the same tolerance)
    # and the dump of every atom's position after the balancing (exact).
    for name in plain longpipe; do
      cp "$WORK/$name/rdf.txt" "$WORK/$name.txt"
    done
    compare 1e-6 1e-9
    cmp "$WORK/plain/dump.atoms" "$WORK/longpipe/dump.atoms" || fail "lammps: the dumps of the atoms differ"
    # Rank 0 exchanges ghost atoms with a rank of the other site at every step.
    traffic 30
    ;;
  scalapack-qr | scalapack-llt)
    need "$SCALAPACK_TESTS/xdqr" scalapack-mpi-test
    [[ -r /usr/share/scalapack/QR.dat ]] || fail "ScaLAPACK's test data is missing: install the Debian package scalapack-test-common"
    if [[ $APP == scalapack-qr ]]; then
      INPUT_FILES=("$HERE/inputs/QR.dat") program=xdqr tests=4
      # shellcheck disable=SC2016  # awk's fields
      drop='$8 = ""; $9 = ""'  # Fact Time, MFLOPS
    else
      INPUT_FILES=("$HERE/inputs/LLT.dat") program=xdllt tests=1
      # shellcheck disable=SC2016
      drop='$9 = ""; $10 = ""; $11 = ""'  # LLt Time, Slv Time, MFLOPS
    fi
    both "$SCALAPACK_TESTS/$program"
    require_line '^END OF TESTS'
    require_line "^ +$tests tests completed and passed residual checks"
    require_line '^ +0 tests completed and failed residual checks'
    for name in plain longpipe; do
      awk "\$1 == \"WALL\" { $drop } { print }" "$WORK/$name.out" >"$WORK/$name.txt"
    done
    # The scaled residuals are printed with one decimal; a different order of the sums in the
    # factorization may move that digit by one.
    compare 0 0.1
    traffic 2
    ;;
  netpipe)
    need /usr/bin/NPopenmpi netpipe-openmpi
    RANKS_PER_SITE=1 SITES=0,1
    # No perturbations (-p 0) and a fixed count (-n 5): the same sizes and counts in every run.
    both /usr/bin/NPopenmpi -i -n 5 -u 65536 -p 0 -z
    for name in plain longpipe; do
      # NetPIPE reports each size's check on stderr, and writes "size count" lines to np.out.
      grep 'Integrity check' "$WORK/$name.err" >"$WORK/$name.txt" || true
      [[ $(grep -c 'Integrity check passed$' "$WORK/$name.txt") -eq 28 ]] ||
        { cat "$WORK/$name.err" >&2; fail "netpipe, $name run: not 28 sizes passing the integrity check"; }
      cat "$WORK/$name/np.out" >>"$WORK/$name.txt"
    done
    compare 0 0
    # The ping-pong's messages from rank 0 to rank 1: 5 per size.
    traffic 140
    ;;
  mumps-laplace)
    need /usr/lib/mumps/dsimpletest mumps-test
    readonly GRID=30
    python3 "$HERE/mumps_laplace.py" input "$GRID" >"$WORK/laplace.txt"
    INPUT=$WORK/laplace.txt
    both /usr/lib/mumps/dsimpletest
    require_line '^ +INFOG\(1\) += +0$'
    python3 "$HERE/mumps_laplace.py" check "$GRID" "$WORK/plain.out" "$WORK/longpipe.out" ||
      fail "mumps-laplace: wrong solution"
    # Dropped: the elapsed times and the solution (checked above, within 1e-9); the statistics of
    # the analysis, factorization and solve (sizes, operation counts, memory) are exact.
    normalize '/[Tt]ime/d; /Solution is/d'
    compare 0 0
    # Rank 0, MUMPS's host, sends the matrix entries and the right-hand side to the other site.
    traffic 2
    ;;
  *) fail "unknown program $APP" ;;
esac
say "PASS $APP"
