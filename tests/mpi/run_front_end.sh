#!/usr/bin/env bash
# run_front_end.sh MODE SCENARIO: plain MPI programs (mpi.h only) with and without
# LD_PRELOAD=liblongpipe.so; the results must be the same and LongPipe must really have carried the
# inter-site messages (LONGPIPE_STATS, one file per rank).
#
#   MODE      local     mpirun on this host; sites forced with LONGPIPE_MPI_SITES
#             two-site  apps/mpi-sites across the emulated link of the ctest fixture
#                       (LP_WAN_INSTANCE): ranks 0,1 on site-a, 2,3 on site-b, sites found
#                       automatically (host names + measured round trip)
#   SCENARIO  semantics           front_end_semantics.c, 4 ranks, sites {0,1} {2,3}: identical
#                                 transcripts; only inter-site sessions, carrying the messages
#             dlopen-local        the same program built as a plugin that a program without MPI
#                                 loads with dlopen(RTLD_LOCAL): libmpi is not in the global scope
#             same-site           the same program with automatic sites on one host: one site, so
#                                 LongPipe stays out of the way (no engine, no statistics)
#             unreachable-return  a peer stops answering; MPI_ERRORS_RETURN gets MPI_ERR_OTHER
#             unreachable-fatal   ... MPI_ERRORS_ARE_FATAL: LongPipe aborts naming the peer
#             unreachable-barrier the other site's leader stops; MPI_ERRORS_RETURN: both ranks of the
#                                 first site get MPI_ERR_OTHER from MPI_Barrier (none waits forever)
#             unreachable-ibarrier the same with MPI_Ibarrier + MPI_Wait
#             unreachable-scatter the same with MPI_Scatter whose root is the stopped leader
#             unreachable-alltoall the same with MPI_Alltoall
#             bad-sites           LONGPIPE_MPI_SITES out of range, or a LONGPIPE_WINDOW_FULL that drops
#                                 messages: the job fails naming the variable
#             unknown-setting     a misspelt LONGPIPE_* name, all ranks on one site: the job fails
#                                 naming it and the nearest known name
#             loads-without-mpi   no libmpi reference left to the dynamic linker: loads into /bin/true
#                                 (LD_BIND_NOW too); MPI_Init without libmpi aborts naming PMPI_Init
#             thread-multiple     MPI_THREAD_MULTIPLE across sites is provided as Open MPI provides
#                                 it, and MPI_Query_thread says the same
#             multiple-p2p        front_end_multiple.c, 4 ranks, sites {0,1} {2,3}, 4 threads per rank
#                                 at MPI_THREAD_MULTIPLE: point-to-point on distinct tags per thread
#                                 (Irecv + Waitany, MPI_ANY_SOURCE, Probe/Improbe + Mrecv), content
#                                 and per-(source, tag) order checked: identical transcripts
#             multiple-collectives the same program: each thread's collectives on its own duplicate of
#                                 MPI_COMM_WORLD at once (and a Comm_dup of it)
#             mpi4py              front_end_mpi4py.py with Debian's python3-mpi4py, 4 ranks, sites
#                                 {0,1} {2,3}: Python loads libmpi with dlopen after the preload;
#                                 identical transcripts, LongPipe carried the inter-site messages
#             flood               front_end_flood.c, 2 sites: a receiver that posts no receive for a
#                                 while holds a bounded number of messages (the sender's window fills,
#                                 LONGPIPE_WINDOW_FULL=fail), then gets all of them in order
#             ordering            front_end_ordering.c, 4 ranks, sites {0,1} {2,3}: receives, probes,
#                                 Sendrecv and persistent receives from a same-site rank posted after
#                                 a LongPipe-side receive that may take its messages match in posting
#                                 order; operations pending at MPI_Comm_free complete normally. The
#                                 program checks the values; the transcripts must be identical
#             large               front_end_large.c, 2 ranks, sites 0,1: 80 MiB messages (segments):
#                                 Send/Probe/Recv, Isend/Irecv of a vector type, one vector element
#                                 of 80 MiB, Ssend, a truncated receive, Sendrecv_replace: identical
#                                 transcripts, the messages carried by LongPipe
#             large-huge          the same program, one message of 2.5 GiB, checked by pattern
#             large-send-error    LongPipe only: Isend and Sendrecv of 80 MiB into a full window
#                                 (LONGPIPE_WINDOW_FULL=fail) fail through the error handler and leave
#                                 no request and no receive behind
#             progress-sit-alltoallw  front_end_progress.c, 4 ranks, sites {0,1} {2,3}: rank 0 has an
#                                 MPI_Irecv from rank 2 posted and sits in MPI_Alltoallw on its own
#                                 site, which rank 1 enters only after rank 2's MPI_Ssend to rank 0
#                                 completed: identical transcripts (no deadlock)
#             progress-sit-native the same with rank 0 in PMPI_Recv (not wrapped by LongPipe)
#             progress-sit-compute 2 sites: rank 0 computes, calling no MPI, until rank 1's MPI_Ssend
#                                 completed (LongPipe only: Open MPI alone makes no progress outside
#                                 its calls)
#             progress-bibw       2 sites, osu_bibw's shape: 64 MPI_Irecv + 64 MPI_Isend of 4 MiB
#                                 each way, one MPI_Waitall, with a 16 MiB window (sanitizer
#                                 builds: 256 KiB messages, 1 MiB window)
#             progress-isend-first 2 sites: 400 MPI_Isend of 64 KiB each way before any receive
#                                 (every other one of a derived type: packed by the application's
#                                 thread), with a 1 MiB window; then all received in order and intact
#             progress-exchange-large 2 sites: both ranks MPI_Sendrecv 300 MiB to each other at once
#                                 (1 MiB segments, a 4 MiB window; sanitizer builds: 24 MiB)
#
# Environment: LONGPIPE_LIBRARY, MPI_FRONT_END_SEMANTICS, MPI_FRONT_END_UNREACHABLE,
#              MPI_FRONT_END_THREADS, MPI_FRONT_END_FLOOD, MPI_FRONT_END_ORDERING, MPI_FRONT_END_LARGE,
#              MPI_FRONT_END_DLOPEN_HOST, MPI_FRONT_END_SEMANTICS_PLUGIN, MPI_FRONT_END_PROGRESS,
#              MPI_FRONT_END_MULTIPLE.
set -euo pipefail

MODE=${1:?usage: run_front_end.sh local|two-site SCENARIO}
SCENARIO=${2:?usage: run_front_end.sh MODE semantics|mpi4py|same-site|unreachable-return|unreachable-fatal|unreachable-barrier|unreachable-ibarrier|unreachable-scatter|unreachable-alltoall|bad-sites|unknown-setting|loads-without-mpi}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
SEMANTICS=${MPI_FRONT_END_SEMANTICS:-}
UNREACHABLE=${MPI_FRONT_END_UNREACHABLE:-}
THREADS=${MPI_FRONT_END_THREADS:-}
FLOOD=${MPI_FRONT_END_FLOOD:-}
ORDERING=${MPI_FRONT_END_ORDERING:-}
LARGE=${MPI_FRONT_END_LARGE:-}
DLOPEN_HOST=${MPI_FRONT_END_DLOPEN_HOST:-}
SEMANTICS_PLUGIN=${MPI_FRONT_END_SEMANTICS_PLUGIN:-}
PROGRESS=${MPI_FRONT_END_PROGRESS:-}
MULTIPLE=${MPI_FRONT_END_MULTIPLE:-}
# How long one run may take before it counts as hung.
readonly RUN_SECONDS=240

# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"

# shellcheck source=mpi_job.sh
source "$HERE/mpi_job.sh"

WORK=$(mktemp -d /tmp/lp-mpi-front.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# run_job PRELOAD(yes|no) RANKS OUT ERR PROGRAM ARGS... (extra -x NAME=VALUE from $JOB_ENV)
run_job() {
  local preload=$1 ranks=$2 out=$3 err=$4
  shift 4
  mpi_job "$preload" "$ranks" "${JOB_ENV[@]}" -- "$@" >"$out" 2>"$err"
}

# Every session in a rank's statistics must lead to a rank of another site, messages crossed both
# ways, and rank 0 sent at least MIN messages over LongPipe in total (longpipe_statistics.py).
check_statistics() {
  local sites=$1 min_sent=$2
  python3 "$HERE/longpipe_statistics.py" "$WORK/stats.json" "$sites" --rank0-sent "$min_sent" || fail "LongPipe statistics"
}

# Under TSan, for a program at MPI_THREAD_MULTIPLE: what Open MPI (not instrumented) does then is
# Open MPI's to judge, also its copies into the program's buffers (ignore_noninstrumented_modules).
tsan_at_multiple() {
  [[ $SANITIZER_RUNTIME == *tsan* ]] || return 0
  export TSAN_OPTIONS="$TSAN_OPTIONS ignore_noninstrumented_modules=1 suppressions=$HERE/open_mpi_multiple.tsan.supp"
}

case $SCENARIO in
  semantics | dlopen-local)
    [[ -x $SEMANTICS ]] || fail "MPI_FRONT_END_SEMANTICS must name the test program"
    program=("$SEMANTICS")
    if [[ $SCENARIO == dlopen-local ]]; then
      [[ $MODE == local ]] || fail "dlopen-local runs on one host"
      [[ -x $DLOPEN_HOST && -f $SEMANTICS_PLUGIN ]] ||
        fail "MPI_FRONT_END_DLOPEN_HOST and MPI_FRONT_END_SEMANTICS_PLUGIN must name the test programs"
      program=("$DLOPEN_HOST" "$SEMANTICS_PLUGIN" front_end_semantics_main)
    fi
    JOB_ENV=()
    [[ $MODE == local ]] && JOB_ENV+=(LONGPIPE_MPI_SITES=0,0,1,1)
    say "$MODE: ${program[*]##*/} without LongPipe"
    run_job no 4 "$WORK/plain.out" "$WORK/plain.err" "${program[@]}" || { cat "$WORK/plain.err" >&2; fail "plain run failed"; }
    JOB_ENV+=(LONGPIPE_STATS="$WORK/stats.json" LONGPIPE_RTT=10)
    say "$MODE: ${program[*]##*/} with LD_PRELOAD=$(basename "$LIBRARY")"
    run_job yes 4 "$WORK/longpipe.out" "$WORK/longpipe.err" "${program[@]}" ||
      { cat "$WORK/longpipe.err" >&2; fail "run with LongPipe failed"; }
    [[ -s $WORK/plain.out ]] || fail "empty transcript"
    diff -u "$WORK/plain.out" "$WORK/longpipe.out" >&2 || fail "transcripts differ"
    say "transcripts identical ($(wc -l <"$WORK/plain.out") lines)"
    # Rank 0 sends 219 messages to ranks 2 and 3 (200 of them in the ordering stage).
    check_statistics 0,0,1,1 219
    ;;
  same-site)
    [[ $MODE == local ]] || fail "same-site runs on one host"
    JOB_ENV=()
    run_job no 4 "$WORK/plain.out" "$WORK/plain.err" "$SEMANTICS" || fail "plain run failed"
    JOB_ENV=(LONGPIPE_STATS="$WORK/stats.json")
    run_job yes 4 "$WORK/longpipe.out" "$WORK/longpipe.err" "$SEMANTICS" ||
      { cat "$WORK/longpipe.err" >&2; fail "run with LongPipe failed"; }
    diff -u "$WORK/plain.out" "$WORK/longpipe.out" >&2 || fail "transcripts differ"
    if compgen -G "$WORK/stats.json*" >/dev/null; then
      fail "one host is one site, yet LongPipe started an engine: $(ls "$WORK"/stats.json*)"
    fi
    say "one site found automatically; LongPipe stayed out of the way"
    ;;
  unreachable-return | unreachable-fatal)
    [[ -x $UNREACHABLE ]] || fail "MPI_FRONT_END_UNREACHABLE must name the test program"
    # A stopped rank's host still answers TCP: a silent path, given up on after LONGPIPE_SILENT_PATH_MS.
    JOB_ENV=(LONGPIPE_MPI_SITES=0,1 LONGPIPE_KEEPALIVE_MS=200 LONGPIPE_DEAD_PEER_MS=1500 LONGPIPE_SILENT_PATH_MS=2000)
    rc=0
    run_job yes 2 "$WORK/out" "$WORK/err" "$UNREACHABLE" "${SCENARIO#unreachable-}" || rc=$?
    cat "$WORK/out" "$WORK/err" >&2
    [[ $rc -ne 0 ]] || fail "the job did not fail"
    [[ $rc -ne 124 && $rc -ne 137 ]] || fail "the job hung instead of reporting the stopped peer"
    if [[ $SCENARIO == unreachable-return ]]; then
      grep -q 'send to the stopped rank: failed (class MPI_ERR_OTHER)' "$WORK/out" ||
        fail "MPI_ERRORS_RETURN did not return MPI_ERR_OTHER"
    else
      grep -Eq 'liblongpipe: MPI rank 0: MPI rank 1 \([^)]+:[0-9]+\) is unreachable.*aborting' "$WORK/err" ||
        fail "no abort naming the unreachable peer"
      ! grep -q 'send to the stopped rank' "$WORK/out" || fail "MPI_ERRORS_ARE_FATAL returned to the program"
    fi
    ;;
  unreachable-barrier | unreachable-ibarrier | unreachable-scatter | unreachable-alltoall)
    JOB_ENV=(LONGPIPE_MPI_SITES=0,0,1,1 LONGPIPE_KEEPALIVE_MS=200 LONGPIPE_DEAD_PEER_MS=1500 LONGPIPE_SILENT_PATH_MS=2000)
    kind=${SCENARIO#unreachable-}
    rc=0
    run_job yes 4 "$WORK/out" "$WORK/err" "$UNREACHABLE" "$kind" || rc=$?
    cat "$WORK/out" "$WORK/err" >&2
    [[ $rc -ne 124 && $rc -ne 137 ]] || fail "the job hung instead of reporting the stopped leader"
    for rank in 0 1; do
      grep -q "rank $rank: $kind with the other site's leader stopped: failed (class MPI_ERR_OTHER)" "$WORK/out" ||
        fail "rank $rank did not get MPI_ERR_OTHER from the $kind"
    done
    ;;
  bad-sites)
    JOB_ENV=(LONGPIPE_MPI_SITES=0,0,9)
    rc=0
    run_job yes 2 "$WORK/out" "$WORK/err" "$SEMANTICS" || rc=$?
    [[ $rc -ne 0 ]] || fail "a bad LONGPIPE_MPI_SITES was accepted"
    grep -q "LONGPIPE_MPI_SITES='0,0,9' is invalid: expected .* 2 site numbers (0 to 1)" "$WORK/err" ||
      { cat "$WORK/err" >&2; fail "the error does not name the variable and its range"; }
    say "refused: $(grep -m1 LONGPIPE_MPI_SITES "$WORK/err")"
    # A window policy that drops messages: refused at MPI_Init, never a lost message later.
    for policy in drop-oldest keep-latest; do
      JOB_ENV=(LONGPIPE_MPI_SITES=0,1 LONGPIPE_WINDOW_FULL=$policy)
      rc=0
      run_job yes 2 "$WORK/out" "$WORK/err" "$SEMANTICS" || rc=$?
      [[ $rc -ne 0 ]] || fail "LONGPIPE_WINDOW_FULL=$policy was accepted by the MPI front end"
      grep -q "LongPipe cannot start: LONGPIPE_WINDOW_FULL=$policy drops messages, which MPI does not allow" "$WORK/err" ||
        { cat "$WORK/err" >&2; fail "the error does not say why LONGPIPE_WINDOW_FULL=$policy is refused"; }
    done
    say "refused: LONGPIPE_WINDOW_FULL=drop-oldest and keep-latest"
    ;;
  unknown-setting)
    # Every LONGPIPE_* name is checked at MPI_Init, also when all ranks share one site (LongPipe
    # then carries nothing): a misspelt one aborts the job with the nearest known name.
    JOB_ENV=(LONGPIPE_MPI_SITES=0,0 LONGPIPE_CARIER=udp)
    rc=0
    run_job yes 2 "$WORK/out" "$WORK/err" "$SEMANTICS" || rc=$?
    [[ $rc -ne 0 ]] || fail "LONGPIPE_CARIER was accepted"
    grep -q "LongPipe cannot start: LONGPIPE_CARIER is not a LongPipe setting; did you mean LONGPIPE_CARRIER?" "$WORK/err" ||
      { cat "$WORK/err" >&2; fail "the error does not name the variable and suggest LONGPIPE_CARRIER"; }
    say "refused: $(grep -m1 LONGPIPE_CARIER "$WORK/err")"
    ;;
  loads-without-mpi)
    # Not even a weak one: bound (to nothing) when the library loads, it would stay null in a
    # program that loads libmpi later (mpi4py).
    unresolved=$(nm -D --undefined-only "$LIBRARY" | awk '$2 ~ /^(PMPI_|ompi_|MPI_|mpi_fortran_)/ {print $2}')
    [[ -z $unresolved ]] ||
      fail "references to libmpi left to the dynamic linker (name them in libshim/mpi/libmpi_names.h): $unresolved"
    LD_PRELOAD="$PRELOAD" /bin/true || fail "liblongpipe.so does not load into /bin/true"
    LD_BIND_NOW=1 LD_PRELOAD="$PRELOAD" /bin/true || fail "liblongpipe.so does not load into /bin/true with LD_BIND_NOW"
    say "loads without libmpi (lazy and immediate binding)"
    # An MPI call without libmpi in the process: a message naming the missing symbol and an abort
    # (SIGABRT, status 134), never a call to address 0.
    rc=0
    LD_PRELOAD="$PRELOAD" /usr/bin/python3 -c 'import ctypes; ctypes.CDLL(None).MPI_Init(None, None)' \
      2>"$WORK/err" || rc=$?
    cat "$WORK/err" >&2
    grep -q "liblongpipe: the MPI front end needs Open MPI's PMPI_Init: not in the global scope, and no libmpi.so is loaded; aborting" "$WORK/err" ||
      fail "MPI_Init without libmpi: no message naming PMPI_Init"
    ((rc == 134)) || fail "MPI_Init without libmpi: exit status $rc, not an abort (134)"
    ;;
  thread-multiple)
    [[ -x $THREADS ]] || fail "MPI_FRONT_END_THREADS must name the test program"
    tsan_at_multiple
    JOB_ENV=(LONGPIPE_MPI_SITES=0,1)
    run_job no 2 "$WORK/plain.out" "$WORK/plain.err" "$THREADS" || fail "plain run failed"
    grep -qx 'provided: MPI_THREAD_MULTIPLE' "$WORK/plain.out" || fail "Open MPI alone did not provide MULTIPLE"
    grep -qx 'query_thread: MPI_THREAD_MULTIPLE' "$WORK/plain.out" || fail "Open MPI alone: MPI_Query_thread disagrees"
    JOB_ENV+=(LONGPIPE_STATS="$WORK/stats.json")
    run_job yes 2 "$WORK/out" "$WORK/err" "$THREADS" || { cat "$WORK/err" >&2; fail "run with LongPipe failed"; }
    compgen -G "$WORK/stats.json*" >/dev/null || fail "LongPipe did not start (no statistics)"
    grep -qx 'provided: MPI_THREAD_MULTIPLE' "$WORK/out" || { cat "$WORK/out" >&2; fail "LongPipe lowered the thread level"; }
    grep -qx 'query_thread: MPI_THREAD_MULTIPLE' "$WORK/out" ||
      { cat "$WORK/out" >&2; fail "MPI_Query_thread does not answer what MPI_Init_thread provided"; }
    say "MPI_THREAD_MULTIPLE provided across sites, as Open MPI provides it"
    ;;
  multiple-*)
    [[ -x $MULTIPLE ]] || fail "MPI_FRONT_END_MULTIPLE must name the test program"
    kind=${SCENARIO#multiple-}
    tsan_at_multiple
    messages=150
    [[ -n $SANITIZER_RUNTIME ]] && messages=30  # sanitizers are slow
    JOB_ENV=()
    [[ $MODE == local ]] && JOB_ENV+=(LONGPIPE_MPI_SITES=0,0,1,1)
    # The program's watchdog stops a hung rank (status 3, "TIMEOUT" on stderr).
    say "$MODE: front_end_multiple $kind without LongPipe"
    run_job no 4 "$WORK/plain.out" "$WORK/plain.err" "$MULTIPLE" "$kind" "$messages" ||
      { cat "$WORK/plain.out" "$WORK/plain.err" >&2; fail "plain run failed"; }
    JOB_ENV+=(LONGPIPE_STATS="$WORK/stats.json")
    say "$MODE: front_end_multiple $kind with LD_PRELOAD=$(basename "$LIBRARY")"
    run_job yes 4 "$WORK/longpipe.out" "$WORK/longpipe.err" "$MULTIPLE" "$kind" "$messages" || {
      cat "$WORK/longpipe.out" "$WORK/longpipe.err" >&2
      grep -q TIMEOUT "$WORK/longpipe.err" && fail "$kind hung with LongPipe (deadlock)"
      fail "run with LongPipe failed"
    }
    grep -qx "$kind: complete and intact on every rank" "$WORK/longpipe.out" ||
      { cat "$WORK/longpipe.out" "$WORK/longpipe.err" >&2; fail "$kind: wrong result with LongPipe"; }
    diff -u "$WORK/plain.out" "$WORK/longpipe.out" >&2 || fail "transcripts differ"
    # p2p: each of rank 0's 4 threads sends 3 x $messages messages to each of ranks 2 and 3.
    min_sent=1
    [[ $kind == p2p ]] && min_sent=$((24 * messages))
    check_statistics 0,0,1,1 "$min_sent"
    say "$kind: complete and intact, the same as Open MPI alone"
    ;;
  mpi4py)
    # Debian's interpreter: the one python3-mpi4py is installed for (not whichever python3 is first).
    python=/usr/bin/python3
    "$python" -c 'import mpi4py, numpy' 2>/dev/null || fail "$python cannot import mpi4py and numpy (python3-mpi4py, python3-numpy)"
    program=$HERE/front_end_mpi4py.py
    JOB_ENV=()
    [[ $MODE == local ]] && JOB_ENV+=(LONGPIPE_MPI_SITES=0,0,1,1)
    # run_mpi4py PRELOAD(yes|no) NAME: the job, failing with the reason (a timeout named as such).
    run_mpi4py() {
      local rc=0
      run_job "$1" 4 "$WORK/$2.out" "$WORK/$2.err" "$python" "$program" || rc=$?
      ((rc == 0)) && return
      cat "$WORK/$2.out" "$WORK/$2.err" >&2
      ((rc == 124 || rc == 137)) && fail "$2 run: no end after ${RUN_SECONDS} s (hung)"
      fail "$2 run failed (status $rc)"
    }
    say "$MODE: mpi4py without LongPipe"
    run_mpi4py no plain
    JOB_ENV+=(LONGPIPE_STATS="$WORK/stats.json")
    say "$MODE: mpi4py with LD_PRELOAD=$(basename "$LIBRARY")"
    run_mpi4py yes longpipe
    grep -qx done "$WORK/plain.out" || fail "the program did not finish"
    diff -u "$WORK/plain.out" "$WORK/longpipe.out" >&2 || fail "transcripts differ"
    say "transcripts identical ($(wc -l <"$WORK/plain.out") lines)"
    # Rank 0 sends 58 messages to ranks 2 and 3 and receives 58 from them (collectives aside).
    python3 "$HERE/longpipe_statistics.py" "$WORK/stats.json" 0,0,1,1 --rank0-sent 58 --rank0-received 58 ||
      fail "LongPipe statistics"
    ;;
  flood)
    [[ -x $FLOOD ]] || fail "MPI_FRONT_END_FLOOD must name the test program"
    # What the receiver may hold, with a window of W messages: the front end's unexpected messages
    # (kUnexpectedBound, libshim/mpi/front_end.h) plus its engine's receive queue (W, and at most
    # one read beyond it: the W in flight); on the way, the sender's ARQ window (W) and queue (W).
    # Every message sent before the first refusal is in one of those places.
    readonly window=16 unexpected_bound=64 messages=1000
    readonly most=$((unexpected_bound + 4 * window))
    # The program's MPI_Ibarrier must stay Open MPI's (LONGPIPE_COLLECTIVES=native): across sites it
    # would travel behind the flood, and waiting for it would rightly take the flood out of the engine.
    JOB_ENV=(LONGPIPE_MPI_SITES=0,1 LONGPIPE_WINDOW_MESSAGES=$window LONGPIPE_WINDOW_FULL=fail
             LONGPIPE_COLLECTIVES=native LONGPIPE_STATS="$WORK/stats.json")
    run_job yes 2 "$WORK/out" "$WORK/err" "$FLOOD" "$messages" 1024 || { cat "$WORK/out" "$WORK/err" >&2; fail "run failed"; }
    cat "$WORK/out" >&2
    grep -qx "receiver: all $messages messages in order and intact" "$WORK/out" || fail "messages lost, reordered or damaged"
    accepted=$(sed -n 's/^sender: the window stayed full after \([0-9]*\) messages.*/\1/p' "$WORK/out")
    [[ -n $accepted ]] || fail "the sender's window never filled: the receiver took every unexpected message"
    ((accepted <= most)) || fail "$accepted messages left the sender before its window filled; at most $most may"
    check_statistics 0,1 "$messages"
    say "window stayed full after $accepted messages (at most $most); all $messages delivered in order"
    ;;
  ordering)
    [[ -x $ORDERING ]] || fail "MPI_FRONT_END_ORDERING must name the test program"
    [[ $MODE == local ]] || fail "ordering runs on one host"
    JOB_ENV=(LONGPIPE_MPI_SITES=0,0,1,1)
    say "front_end_ordering without LongPipe"
    rc=0
    run_job no 4 "$WORK/plain.out" "$WORK/plain.err" "$ORDERING" || rc=$?
    [[ $rc -ne 124 && $rc -ne 137 ]] || fail "plain run hung (more than $RUN_SECONDS s)"
    [[ $rc -eq 0 ]] || { cat "$WORK/plain.err" >&2; fail "plain run failed"; }
    JOB_ENV+=(LONGPIPE_STATS="$WORK/stats.json")
    say "front_end_ordering with LD_PRELOAD=$(basename "$LIBRARY")"
    rc=0
    run_job yes 4 "$WORK/longpipe.out" "$WORK/longpipe.err" "$ORDERING" || rc=$?
    [[ $rc -ne 124 && $rc -ne 137 ]] || { cat "$WORK/longpipe.err" >&2; fail "run with LongPipe hung (more than $RUN_SECONDS s)"; }
    [[ $rc -eq 0 ]] || { grep -h 'FAILED' "$WORK/longpipe.err" >&2 || cat "$WORK/longpipe.err" >&2; fail "run with LongPipe failed"; }
    [[ -s $WORK/plain.out ]] || fail "empty transcript"
    diff -u "$WORK/plain.out" "$WORK/longpipe.out" >&2 || fail "transcripts differ"
    say "transcripts identical ($(wc -l <"$WORK/plain.out") lines)"
    # Rank 0 sends rank 2 at least the freed-communicator signal and the synchronous message.
    check_statistics 0,0,1,1 2
    ;;
  large | large-huge)
    [[ -x $LARGE ]] || fail "MPI_FRONT_END_LARGE must name the test program"
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    mode=large
    [[ $SCENARIO == large-huge ]] && mode=huge
    JOB_ENV=(LONGPIPE_MPI_SITES=0,1)
    say "$SCENARIO without LongPipe"
    run_job no 2 "$WORK/plain.out" "$WORK/plain.err" "$LARGE" "$mode" ||
      { cat "$WORK/plain.out" "$WORK/plain.err" >&2; fail "plain run failed (or took over ${RUN_SECONDS} s)"; }
    JOB_ENV+=(LONGPIPE_STATS="$WORK/stats.json")
    say "$SCENARIO with LD_PRELOAD=$(basename "$LIBRARY")"
    run_job yes 2 "$WORK/longpipe.out" "$WORK/longpipe.err" "$LARGE" "$mode" ||
      { cat "$WORK/longpipe.out" "$WORK/longpipe.err" >&2; fail "run with LongPipe failed (or took over ${RUN_SECONDS} s)"; }
    cat "$WORK/longpipe.out" >&2
    [[ -s $WORK/plain.out ]] || fail "empty transcript"
    diff -u "$WORK/plain.out" "$WORK/longpipe.out" >&2 || fail "transcripts differ"
    # Every check in the transcript found the data right ("first wrong int N of N": none wrong).
    awk '/first wrong int/ { checks++; if ($(NF-2) != $NF) bad++ }
         /wrong data ints/ { checks++; if ($0 !~ /wrong data ints 0, holes overwritten 0$/) bad++ }
         END { exit !(checks > 0 && bad == 0) }' "$WORK/longpipe.out" || fail "data damaged"
    # Rank 0's messages crossed over LongPipe in segments of at most 16 MiB: 6 x 6 for the six of
    # 80 MiB, 161 for the one of 2.5 GiB.
    min_sent=36
    [[ $SCENARIO == large-huge ]] && min_sent=161
    check_statistics 0,1 "$min_sent"
    say "transcripts identical ($(wc -l <"$WORK/plain.out") lines)"
    ;;
  large-send-error)
    [[ -x $LARGE ]] || fail "MPI_FRONT_END_LARGE must name the test program"
    JOB_ENV=(LONGPIPE_MPI_SITES=0,1 LONGPIPE_WINDOW_MESSAGES=1 LONGPIPE_WINDOW_FULL=fail LONGPIPE_COLLECTIVES=native)
    rc=0
    run_job yes 2 "$WORK/out" "$WORK/err" "$LARGE" send-error || rc=$?
    cat "$WORK/out" "$WORK/err" >&2
    [[ $rc -ne 124 && $rc -ne 137 ]] || fail "the job hung (over ${RUN_SECONDS} s)"
    grep -q '^isend 80 MiB into a full window: MPI_ERR_OTHER, handler called 1 time(s) with MPI_ERR_OTHER, request MPI_REQUEST_NULL$' \
      "$WORK/out" || fail "MPI_Isend's failure did not go through the error handler, or left a request"
    grep -q '^sendrecv of 80 MiB into a full window: MPI_ERR_OTHER, handler called 2 time(s)$' "$WORK/out" ||
      fail "MPI_Sendrecv's failed send did not go through the error handler"
    grep -q "^later receive with the failed Sendrecv's tag: got the reply (33)$" "$WORK/out" ||
      fail "the failed MPI_Sendrecv left a receive behind that took a later message"
    [[ $rc -eq 0 ]] || fail "the job failed (exit $rc)"
    say "failed sends went through the error handler and left nothing behind"
    ;;
  progress-*)
    [[ -x $PROGRESS ]] || fail "MPI_FRONT_END_PROGRESS must name the test program"
    [[ $MODE == local ]] || fail "the progress scenarios run locally"
    kind=${SCENARIO#progress-}
    ranks=2
    JOB_ENV=(LONGPIPE_MPI_SITES=0,1)
    args=("$kind")
    case $kind in
      sit-alltoallw | sit-native) ranks=4 JOB_ENV=(LONGPIPE_MPI_SITES=0,0,1,1) ;;
      sit-compute) args+=("$WORK/ssend-done") ;;
      bibw)
        if [[ -n $SANITIZER_RUNTIME ]]; then  # the same shape, a sixteenth of the bytes: sanitizers are slow
          JOB_ENV+=(LONGPIPE_WINDOW_BYTES=$((1 << 20)) LONGPIPE_MAX_MESSAGE=$((512 << 10)))
          args+=($((256 << 10)))
        else
          JOB_ENV+=(LONGPIPE_WINDOW_BYTES=$((16 << 20)) LONGPIPE_MAX_MESSAGE=$((8 << 20)))
        fi
        ;;
      isend-first) JOB_ENV+=(LONGPIPE_WINDOW_BYTES=$((1 << 20)) LONGPIPE_MAX_MESSAGE=$((1 << 20))) ;;
      exchange-large)
        JOB_ENV+=(LONGPIPE_WINDOW_BYTES=$((4 << 20)) LONGPIPE_MAX_MESSAGE=$((1 << 20)))
        [[ -n $SANITIZER_RUNTIME ]] && args+=($((24 << 20)))  # sanitizers are slow: 24 MiB each way
        ;;
    esac
    # The program's watchdog stops a hung rank after 120 s (status 3, "TIMEOUT" on stderr).
    if [[ $kind != sit-compute ]]; then
      say "$MODE: front_end_progress $kind without LongPipe"
      run_job no "$ranks" "$WORK/plain.out" "$WORK/plain.err" "$PROGRESS" "${args[@]}" ||
        { cat "$WORK/plain.out" "$WORK/plain.err" >&2; fail "plain run failed"; }
    fi
    rm -f "$WORK/ssend-done"
    JOB_ENV+=(LONGPIPE_STATS="$WORK/stats.json")
    say "$MODE: front_end_progress $kind with LD_PRELOAD=$(basename "$LIBRARY")"
    run_job yes "$ranks" "$WORK/longpipe.out" "$WORK/longpipe.err" "$PROGRESS" "${args[@]}" || {
      cat "$WORK/longpipe.out" "$WORK/longpipe.err" >&2
      grep -q TIMEOUT "$WORK/longpipe.err" && fail "$kind hung with LongPipe (deadlock)"
      fail "run with LongPipe failed"
    }
    grep -qx "$kind: complete and intact on every rank" "$WORK/longpipe.out" ||
      { cat "$WORK/longpipe.out" >&2; fail "$kind: wrong result with LongPipe"; }
    if [[ $kind != sit-compute ]]; then
      diff -u "$WORK/plain.out" "$WORK/longpipe.out" >&2 || fail "transcripts differ"
    fi
    check_statistics "${JOB_ENV[0]#LONGPIPE_MPI_SITES=}" 1
    say "$kind: complete and intact"
    ;;
  *) fail "unknown scenario $SCENARIO" ;;
esac
echo "PASS: $MODE $SCENARIO"
