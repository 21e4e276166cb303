#!/usr/bin/env bash
# run_collectives.sh MODE SCENARIO: the site-aware collectives (libshim/mpi/collectives.h) with a
# plain MPI program (collectives.c; collectives_gather.c for the gather-* scenarios), with and
# without LD_PRELOAD=liblongpipe.so.
#
#   MODE      local     mpirun on this host; sites forced with LONGPIPE_MPI_SITES
#             two-site  apps/mpi-sites across the emulated link of the ctest fixture
#                       (LP_WAN_INSTANCE): ranks 0,1 on site-a, 2,3 on site-b, sites found automatically
#   SCENARIO  five-ranks   (local) 5 ranks, sites 0,1,0,1,1 (interleaved, uneven): transcripts identical
#                          to Open MPI alone except the order-sensitive floating-point lines, which
#                          must be identical in two runs under LongPipe; the statistics of every rank
#                          show the site path for all four collectives; LONGPIPE_COLLECTIVES=native
#                          gives Open MPI's transcript exactly and counts only the native path
#             three-ranks  (local) 3 ranks, sites 0,0,1: transcripts identical, site path taken
#             fortran      (local) collectives.f90 (`use mpi`), 3 ranks, sites 0,1,1: transcripts
#                          identical, site path taken (the Fortran entry points reach the front end)
#             bad-setting  (local) LONGPIPE_COLLECTIVES=tree: the job fails naming the variable and values
#             four-ranks   (two-site) 4 ranks, 2 per site: transcripts identical, site path taken
#   Gather(v), Scatter(v), Allgather(v) (collectives_gather.c, .f90): transcripts identical to Open
#   MPI alone's, every rank's statistics show the site path for all six
#             gather-five-ranks   (local) 5 ranks, sites 0,1,0,1,1 (interleaved, uneven); and
#                                 LONGPIPE_COLLECTIVES=native: Open MPI's transcript, no site path
#             gather-three-sites  (local) 6 ranks, sites 0,1,2,0,1,2 (the root feeds two other sites)
#             gather-fortran      (local) collectives_gather.f90 (`use mpi`), 4 ranks, sites 0,1,1,0
#             gather-four-ranks   (two-site) 4 ranks, 2 per site
#   Alltoall(v), Reduce_scatter(_block), Scan, Exscan (collectives_exchange.c / .f90): transcripts
#   identical to Open MPI alone's except the order-sensitive lines, which must be identical in a
#   second LongPipe run; every rank's statistics count exactly the site and native calls the
#   program expects (it writes them from SITES: Scan, Exscan and non-commutative reductions need
#   each site's ranks consecutive); LONGPIPE_COLLECTIVES=native gives Open MPI's transcript exactly
#             exchange-five-ranks   (local) 5 ranks, sites 0,1,0,1,1 (interleaved, uneven)
#             exchange-blocked      (local) 5 ranks, sites 0,0,1,1,1 (Scan and Exscan across sites)
#             exchange-three-sites  (local) 5 ranks, sites 0,0,1,2,2 (blocked, three sites)
#             exchange-fortran      (local) collectives_exchange.f90 (`use mpi`), 3 ranks, sites 0,1,1:
#                                   identical transcripts, each call on the site path
#             exchange-four-ranks   (two-site) 4 ranks, 2 per site, sites found automatically
#                                   (no second or native run)
#   Ibarrier, Ibcast, Iallreduce, Ireduce, Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v/w),
#   Ireduce_scatter(_block), Iscan, Iexscan
#   (collectives_nonblocking.c, collectives_nonblocking_data.c, collectives_nonblocking_vector.c, .f90): transcripts identical to Open MPI
#   alone's except the order-sensitive lines (identical in a second LongPipe run), site path taken
#             nonblocking-five-ranks  (local) 5 ranks, sites 0,1,0,1,1; and LONGPIPE_COLLECTIVES=native:
#                                     Open MPI's transcript, no site path
#             nonblocking-fortran     (local) collectives_nonblocking.f90 (`use mpi`), 3 ranks, sites 0,1,1
#                                     (transcripts compared sorted: two ranks print)
#             nonblocking-four-ranks  (two-site) 4 ranks, 2 per site
#   Every collective on every kind of communicator (collectives_comms.c: world, dup, splits with
#   interleaving and reversed keys, Cartesian with reorder, graph, distributed graph, an
#   intercommunicator and its merge; blocking, nonblocking, neighbourhood): the program checks every
#   result itself; transcripts (sorted: ranks of several communicators print) identical to Open MPI
#   alone's; every rank's statistics count exactly the site and native calls the program expects
#             comms-eight-ranks   (local) 8 ranks, sites 0,0,1,1,0,1,0,1 (interleaved), every root
#                                 (the TSan build: three roots, fewer nonblocking runs)
#             comms-three-sites   (local) 8 ranks, sites 0,0,0,1,1,2,2,2 (blocked, three sites),
#                                 three roots, the nonblocking suite on three communicators
#             comms-idup          (local) 8 ranks, sites 0,0,1,1,0,1,0,1: communicators from
#                                 MPI_Comm_idup, three roots; the statistics show every call on
#                                 the site path as on any communicator, or every one on Open MPI's
#             comms-sixteen-ranks (two-site) 16 ranks, 8 per site, sites found automatically: most
#                                 collectives once on world, the interleaving split and the
#                                 Cartesian communicator, Allreduce and Ibcast on the others
#   The neighbourhood collectives (collectives_neighbor.c / .f90: Cartesian grids of 1-3 dimensions,
#   periodic and not, a graph and a distributed graph with repeated, asymmetric and self edges,
#   derived types, MPI_PROC_NULL neighbours, nonblocking forms waited for in reverse order; the
#   program checks every element): transcripts identical to Open MPI alone's; every rank's
#   statistics count exactly the site and native calls the program expects; LongPipe carried no
#   message inside a site (longpipe_statistics.py); LONGPIPE_COLLECTIVES=native gives Open MPI's
#   transcript exactly, and rank 0 sent and received at least one LongPipe message fewer per call
#   that has a neighbour at another site
#             neighbor-five-ranks  (local) 5 ranks, sites 0,1,0,1,1 (interleaved, uneven)
#             neighbor-four-sites  (local) 6 ranks, sites 0,1,2,3,3,2, LONGPIPE_MAX_MESSAGE=65536
#                                  (the large blocks cross in segments)
#             neighbor-fortran     (local) collectives_neighbor.f90 (`use mpi`), 3 ranks, sites 0,1,1
#             neighbor-four-ranks  (two-site) 4 ranks, 2 per site, sites found automatically
#
# Environment: LONGPIPE_LIBRARY, MPI_COLLECTIVES (the C test program), MPI_COLLECTIVES_F (Fortran),
# MPI_COLLECTIVES_GATHER and MPI_COLLECTIVES_GATHER_F (the gather-* programs, C and Fortran),
# MPI_COLLECTIVES_EXCHANGE and MPI_COLLECTIVES_EXCHANGE_F (the exchange-* programs),
# MPI_COLLECTIVES_NONBLOCKING and MPI_COLLECTIVES_NONBLOCKING_F (the nonblocking-* programs),
# MPI_COLLECTIVES_COMMS (the comms-* program), MPI_COLLECTIVES_NEIGHBOR and MPI_COLLECTIVES_NEIGHBOR_F
# (the neighbor-* programs).
set -euo pipefail

MODE=${1:?usage: run_collectives.sh local|two-site SCENARIO}
SCENARIO=${2:?usage: run_collectives.sh MODE five-ranks|three-ranks|fortran|bad-setting|four-ranks|gather-...|exchange-...|nonblocking-...|neighbor-...}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
case $SCENARIO in
  gather-fortran) PROGRAM=${MPI_COLLECTIVES_GATHER_F:?MPI_COLLECTIVES_GATHER_F must name the Fortran gather test program} ;;
  gather-*) PROGRAM=${MPI_COLLECTIVES_GATHER:?MPI_COLLECTIVES_GATHER must name the gather test program} ;;
  exchange-fortran) PROGRAM=${MPI_COLLECTIVES_EXCHANGE_F:?MPI_COLLECTIVES_EXCHANGE_F must name the Fortran program} ;;
  exchange-*) PROGRAM=${MPI_COLLECTIVES_EXCHANGE:?MPI_COLLECTIVES_EXCHANGE must name the test program} ;;
  nonblocking-fortran) PROGRAM=${MPI_COLLECTIVES_NONBLOCKING_F:?MPI_COLLECTIVES_NONBLOCKING_F must name the Fortran program} ;;
  nonblocking-*) PROGRAM=${MPI_COLLECTIVES_NONBLOCKING:?MPI_COLLECTIVES_NONBLOCKING must name the test program} ;;
  neighbor-fortran) PROGRAM=${MPI_COLLECTIVES_NEIGHBOR_F:?MPI_COLLECTIVES_NEIGHBOR_F must name the Fortran program} ;;
  neighbor-*) PROGRAM=${MPI_COLLECTIVES_NEIGHBOR:?MPI_COLLECTIVES_NEIGHBOR must name the test program} ;;
  comms-*) PROGRAM=${MPI_COLLECTIVES_COMMS:?MPI_COLLECTIVES_COMMS must name the test program} ;;
  *) PROGRAM=${MPI_COLLECTIVES:?MPI_COLLECTIVES must name the test program} ;;
esac
# How long one run may take before it counts as hung.
readonly RUN_SECONDS=240

# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"

# shellcheck source=mpi_job.sh
source "$HERE/mpi_job.sh"

WORK=$(mktemp -d /tmp/lp-mpi-collectives.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# run_job NAME PRELOAD(yes|no) RANKS SITES [NAME=VALUE...]: transcript in $WORK/NAME.out
run_job() {
  local name=$1 preload=$2 ranks=$3 sites=$4
  shift 4
  mkdir -p "$WORK/$name.markers"
  local rc=0
  mpi_job "$preload" "$ranks" "$@" -- "$PROGRAM" "$sites" "$WORK/$name.markers" ${PROGRAM_MODE:+"$PROGRAM_MODE"} \
    >"$WORK/$name.out" 2>"$WORK/$name.err" ||
    rc=$?
  if [[ $rc -ne 0 ]]; then
    cat "$WORK/$name.out" "$WORK/$name.err" >&2
    return $rc
  fi
  [[ -s $WORK/$name.out ]] || fail "$name: empty transcript"
}

# same NAME1 NAME2 [--stable]: transcripts identical (--stable: without the order-sensitive lines)
same() {
  if [[ ${3:-} == --stable ]]; then
    diff -u <(grep -v '^order-sensitive' "$WORK/$1.out") <(grep -v '^order-sensitive' "$WORK/$2.out") >&2 ||
      fail "transcripts $1 and $2 differ"
  else
    diff -u "$WORK/$1.out" "$WORK/$2.out" >&2 || fail "transcripts $1 and $2 differ"
  fi
  say "transcripts $1 and $2 identical${3:+ (order-sensitive lines aside)} ($(wc -l <"$WORK/$1.out") lines)"
}

# check_paths NAME RANKS site|native [COLLECTIVE...]: every rank's statistics
# (LONGPIPE_STATS=$WORK/NAME.stats) count each named collective (default: MPI_Barrier MPI_Bcast
# MPI_Reduce MPI_Allreduce) on the site path at least once (site), or on the native path at least
# once and no collective on the site path (native).
readonly FOUR_COLLECTIVES=(MPI_Barrier MPI_Bcast MPI_Reduce MPI_Allreduce)
readonly GATHER_COLLECTIVES=(MPI_Gather MPI_Gatherv MPI_Scatter MPI_Scatterv MPI_Allgather MPI_Allgatherv)
# What collectives_nonblocking.c calls.
readonly NONBLOCKING_COLLECTIVES=(MPI_Barrier MPI_Bcast MPI_Allreduce MPI_Ibarrier MPI_Ibcast MPI_Iallreduce
  MPI_Ireduce MPI_Igather MPI_Iscatter MPI_Iscatterv MPI_Iallgather MPI_Iallgatherv MPI_Ialltoall
  MPI_Ireduce_scatter MPI_Ireduce_scatter_block MPI_Igatherv MPI_Ialltoallv MPI_Ialltoallw MPI_Iscan MPI_Iexscan)
check_paths() {
  local name=$1 ranks=$2 expected=$3
  shift 3
  (($#)) || set -- "${FOUR_COLLECTIVES[@]}"
  python3 - "$WORK/$name.stats" "$ranks" "$expected" "$@" <<'PY'
import json, sys
prefix, ranks, expected, required = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
for rank in range(ranks):
    path = f"{prefix}.{rank}.collectives"
    try:
        stats = json.load(open(path))
    except (OSError, ValueError) as error:
        sys.exit(f"FAIL: rank {rank} wrote no collective statistics ({path}: {error})")
    if stats["setting"] != expected:
        sys.exit(f"FAIL: rank {rank}: setting {stats['setting']}, expected {expected}")
    for name in required:
        paths = stats["collectives"].get(name)
        if paths is None:
            sys.exit(f"FAIL: rank {rank}: no statistics for {name}")
        if expected == "site" and paths["site"] < 1:
            sys.exit(f"FAIL: rank {rank}: {name} never took the site path: {paths}")
        if expected == "native" and paths["native"] < 1:
            sys.exit(f"FAIL: rank {rank}: {name} never counted with LONGPIPE_COLLECTIVES=native: {paths}")
    if expected == "native":
        for name, paths in stats["collectives"].items():
            if paths["site"] != 0:
                sys.exit(f"FAIL: rank {rank}: {name} took the site path with LONGPIPE_COLLECTIVES=native: {paths}")
    if rank == 0:
        taken = {name: paths for name, paths in stats["collectives"].items() if paths["site"] or paths["native"]}
        print(f"== rank 0 paths: {taken}", file=sys.stderr)
PY
}

# check_expected NAME RANKS site|native [all-native]: every rank's statistics count, for each
# collective the program listed in $WORK/NAME.markers/expected-paths.RANK ("MPI_Scan SITE NATIVE"),
# exactly those site and native calls (site), or all of them as native (native; or all-native with
# the setting site: communicators LongPipe does not know).
check_expected() {
  python3 - "$WORK/$1.stats" "$WORK/$1.markers/expected-paths" "$2" "$3" "${4:-}" <<'PY'
import json, sys
prefix, expected_prefix, ranks, setting = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
all_native = sys.argv[5] == "all-native"
for rank in range(ranks):
    try:
        stats = json.load(open(f"{prefix}.{rank}.collectives"))
        expected = [line.split() for line in open(f"{expected_prefix}.{rank}")]
    except (OSError, ValueError) as error:
        sys.exit(f"FAIL: rank {rank}: {error}")
    if stats["setting"] != setting:
        sys.exit(f"FAIL: rank {rank}: setting {stats['setting']}, expected {setting}")
    for name, site, native in expected:
        want = {"site": int(site), "native": int(native)}
        if setting == "native" or all_native:
            want = {"site": 0, "native": want["site"] + want["native"]}
        if stats["collectives"][name] != want:
            sys.exit(f"FAIL: rank {rank}: {name} took {stats['collectives'][name]}, expected {want}")
        if rank == 0:
            print(f"== rank 0 {name}: {want}", file=sys.stderr)
PY
}

# exchange RANKS SITES: the exchange-* scenarios of collectives_exchange.c (see the top).
exchange() {
  local ranks=$1 sites=$2
  run_job plain no "$ranks" "$sites" || fail "plain run failed"
  run_job site yes "$ranks" "$sites" "LONGPIPE_MPI_SITES=$sites" "LONGPIPE_STATS=$WORK/site.stats" ||
    fail "run with LongPipe failed"
  same plain site --stable
  check_expected site "$ranks" site
  run_job site-again yes "$ranks" "$sites" "LONGPIPE_MPI_SITES=$sites" || fail "second run with LongPipe failed"
  same site site-again
  run_job native yes "$ranks" "$sites" "LONGPIPE_MPI_SITES=$sites" LONGPIPE_COLLECTIVES=native \
    "LONGPIPE_STATS=$WORK/native.stats" || fail "run with LONGPIPE_COLLECTIVES=native failed"
  same plain native
  check_expected native "$ranks" native
}

# comms RANKS SITES MODE [NAME=VALUE...]: the comms-* scenarios of collectives_comms.c (see the top).
comms() {
  local ranks=$1 sites=$2
  PROGRAM_MODE=$3
  shift 3
  run_job plain no "$ranks" "$sites" || fail "plain run failed"
  run_job site yes "$ranks" "$sites" "$@" "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
  diff -u <(sort "$WORK/plain.out") <(sort "$WORK/site.out") >&2 || fail "transcripts plain and site differ"
  say "transcripts plain and site identical ($(wc -l <"$WORK/plain.out") lines, sorted)"
  if [[ $PROGRAM_MODE == idup ]]; then
    # Communicators from MPI_Comm_idup: either LongPipe knows them (every call as on any other
    # communicator) or it does not (every call Open MPI's, README "Limits"); never a mix.
    if check_expected site "$ranks" site 2>/dev/null; then
      say "MPI_Comm_idup communicators: every call on the path of any other communicator"
    else
      check_expected site "$ranks" site all-native ||
        fail "MPI_Comm_idup communicators: the statistics match neither the site path nor Open MPI's alone"
      say "MPI_Comm_idup communicators: every call on Open MPI's path (LongPipe does not know them)"
    fi
  else
    check_expected site "$ranks" site
  fi
}

# neighbor MODE RANKS SITES MIN_MESSAGES [NAME=VALUE...]: the neighbor-* scenarios of
# collectives_neighbor.c (see the top).
neighbor() {
  local mode=$1 ranks=$2 sites=$3 min=$4
  shift 4
  local forced=(LONGPIPE_RTT=50 "$@")  # two-site: the emulated link's round trip
  [[ $mode == local ]] && forced=("LONGPIPE_MPI_SITES=$sites" "$@")
  run_job plain no "$ranks" "$sites" || fail "plain run failed"
  run_job site yes "$ranks" "$sites" "${forced[@]}" "LONGPIPE_STATS=$WORK/site.stats" ||
    fail "run with LongPipe failed"
  same plain site
  check_expected site "$ranks" site
  python3 "$HERE/longpipe_statistics.py" "$WORK/site.stats" "$sites" --rank0-sent "$min" --rank0-received "$min" ||
    fail "the neighbourhood collectives' traffic between sites did not go through LongPipe"
  run_job native yes "$ranks" "$sites" "${forced[@]}" LONGPIPE_COLLECTIVES=native "LONGPIPE_STATS=$WORK/native.stats" ||
    fail "run with LONGPIPE_COLLECTIVES=native failed"
  same plain native
  check_expected native "$ranks" native
  # The same program with Open MPI's neighbourhood collectives: rank 0's LongPipe messages must be
  # fewer by at least one per call that has a neighbour at another site.
  local counts
  counts=$(python3 - "$WORK/site.stats.0" "$WORK/native.stats.0" <<'PY'
import json, sys
for path in sys.argv[1:]:
    sessions = json.load(open(path))["sessions"]
    print(sum(s["messages_sent"] for s in sessions), sum(s["messages_received"] for s in sessions))
PY
  ) || fail "rank 0's statistics unreadable"
  read -r site_sent site_received native_sent native_received <<<"$(echo $counts)"
  say "rank 0 over LongPipe: sent $site_sent, received $site_received; with Open MPI's neighbourhood" \
    "collectives: sent $native_sent, received $native_received"
  ((site_sent - native_sent >= min && site_received - native_received >= min)) ||
    fail "the neighbourhood collectives carried fewer than $min of rank 0's messages over LongPipe"
}

case $SCENARIO in
  neighbor-five-ranks)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    # Rank 0 has a neighbour at the other site in all 52 of its calls (10 on each of four topologies, 5
    # on the two grids with both sides of a dimension one process, 2 with large blocks).
    neighbor local 5 0,1,0,1,1 52
    ;;
  neighbor-four-sites)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    # Segments of 64 KiB: the 1.2 MB blocks travel in pieces.
    neighbor local 6 0,1,2,3,3,2 52 LONGPIPE_MAX_MESSAGE=65536
    ;;
  neighbor-four-ranks)
    [[ $MODE == two-site ]] || fail "$SCENARIO runs across the emulated link"
    # Rank 0's neighbours are all at its own site only on the open ring (its one neighbour is rank 1):
    # 42 calls with a neighbour at the other site.
    neighbor two-site 4 0,0,1,1 42
    ;;
  neighbor-fortran)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    run_job plain no 3 0,1,1 || fail "plain run failed"
    run_job site yes 3 0,1,1 LONGPIPE_MPI_SITES=0,1,1 "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site
    check_paths site 3 site MPI_Neighbor_allgather MPI_Neighbor_allgatherv MPI_Neighbor_alltoall \
      MPI_Neighbor_alltoallv MPI_Neighbor_alltoallw MPI_Ineighbor_allgather MPI_Ineighbor_allgatherv \
      MPI_Ineighbor_alltoall MPI_Ineighbor_alltoallv MPI_Ineighbor_alltoallw
    ;;
  comms-eight-ranks)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    mode=full
    [[ $SANITIZER_RUNTIME == *tsan* ]] && mode=quick  # keep the TSan run short
    comms 8 0,0,1,1,0,1,0,1 "$mode" LONGPIPE_MPI_SITES=0,0,1,1,0,1,0,1
    ;;
  comms-three-sites)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    comms 8 0,0,0,1,1,2,2,2 quick LONGPIPE_MPI_SITES=0,0,0,1,1,2,2,2
    ;;
  comms-idup)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    comms 8 0,0,1,1,0,1,0,1 idup LONGPIPE_MPI_SITES=0,0,1,1,0,1,0,1
    ;;
  comms-sixteen-ranks)
    [[ $MODE == two-site ]] || fail "$SCENARIO runs across the emulated link"
    comms 16 0,0,0,0,0,0,0,0,1,1,1,1,1,1,1,1 link LONGPIPE_RTT=10
    ;;
  exchange-five-ranks)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    exchange 5 0,1,0,1,1
    ;;
  exchange-blocked)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    exchange 5 0,0,1,1,1
    ;;
  exchange-three-sites)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    exchange 5 0,0,1,2,2
    ;;
  exchange-four-ranks)
    [[ $MODE == two-site ]] || fail "$SCENARIO runs across the emulated link"
    run_job plain no 4 0,0,1,1 || fail "plain run failed"
    run_job site yes 4 0,0,1,1 "LONGPIPE_STATS=$WORK/site.stats" LONGPIPE_RTT=10 || fail "run with LongPipe failed"
    same plain site --stable
    check_expected site 4 site
    ;;
  exchange-fortran)
    [[ $MODE == local ]] || fail "$SCENARIO runs on one host"
    run_job plain no 3 0,1,1 || fail "plain run failed"
    run_job site yes 3 0,1,1 LONGPIPE_MPI_SITES=0,1,1 "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site
    # Sites 0,1,1 on MPI_COMM_WORLD: blocked, so every call takes the site path.
    for rank in 0 1 2; do
      printf '%s\n' "MPI_Alltoall 2 0" "MPI_Alltoallv 1 0" "MPI_Alltoallw 1 0" "MPI_Reduce_scatter 1 0" \
        "MPI_Reduce_scatter_block 1 0" \
        "MPI_Scan 1 0" "MPI_Exscan 2 0" >"$WORK/site.markers/expected-paths.$rank"
    done
    check_expected site 3 site
    ;;
  five-ranks)
    [[ $MODE == local ]] || fail "five-ranks runs on one host"
    SITES=LONGPIPE_MPI_SITES=0,1,0,1,1
    run_job plain no 5 0,1,0,1,1 || fail "plain run failed"
    run_job site yes 5 0,1,0,1,1 "$SITES" "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site --stable
    check_paths site 5 site
    run_job site-again yes 5 0,1,0,1,1 "$SITES" || fail "second run with LongPipe failed"
    same site site-again
    run_job native yes 5 0,1,0,1,1 "$SITES" LONGPIPE_COLLECTIVES=native "LONGPIPE_STATS=$WORK/native.stats" ||
      fail "run with LONGPIPE_COLLECTIVES=native failed"
    same plain native
    check_paths native 5 native
    ;;
  three-ranks)
    [[ $MODE == local ]] || fail "three-ranks runs on one host"
    run_job plain no 3 0,0,1 || fail "plain run failed"
    run_job site yes 3 0,0,1 LONGPIPE_MPI_SITES=0,0,1 "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site --stable
    check_paths site 3 site
    ;;
  fortran)
    [[ $MODE == local ]] || fail "fortran runs on one host"
    PROGRAM=${MPI_COLLECTIVES_F:?MPI_COLLECTIVES_F must name the Fortran test program}
    run_job plain no 3 0,1,1 || fail "plain run failed"
    run_job site yes 3 0,1,1 LONGPIPE_MPI_SITES=0,1,1 "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site
    check_paths site 3 site
    ;;
  bad-setting)
    rc=0
    run_job bad yes 2 0,1 LONGPIPE_MPI_SITES=0,1 LONGPIPE_COLLECTIVES=tree 2>/dev/null || rc=$?
    [[ $rc -ne 0 ]] || fail "LONGPIPE_COLLECTIVES=tree was accepted"
    grep -q "LONGPIPE_COLLECTIVES='tree' is invalid: expected site or native" "$WORK/bad.err" ||
      { cat "$WORK/bad.err" >&2; fail "the error does not name the variable and the accepted values"; }
    say "refused: $(grep -m1 LONGPIPE_COLLECTIVES "$WORK/bad.err")"
    ;;
  four-ranks)
    [[ $MODE == two-site ]] || fail "four-ranks runs across the emulated link"
    run_job plain no 4 0,0,1,1 || fail "plain run failed"
    run_job site yes 4 0,0,1,1 "LONGPIPE_STATS=$WORK/site.stats" LONGPIPE_RTT=10 || fail "run with LongPipe failed"
    same plain site --stable
    check_paths site 4 site
    ;;
  gather-five-ranks)
    [[ $MODE == local ]] || fail "gather-five-ranks runs on one host"
    SITES=LONGPIPE_MPI_SITES=0,1,0,1,1
    run_job plain no 5 0,1,0,1,1 || fail "plain run failed"
    run_job site yes 5 0,1,0,1,1 "$SITES" "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site
    check_paths site 5 site "${GATHER_COLLECTIVES[@]}"
    run_job native yes 5 0,1,0,1,1 "$SITES" LONGPIPE_COLLECTIVES=native "LONGPIPE_STATS=$WORK/native.stats" ||
      fail "run with LONGPIPE_COLLECTIVES=native failed"
    same plain native
    check_paths native 5 native "${GATHER_COLLECTIVES[@]}"
    ;;
  gather-three-sites)
    [[ $MODE == local ]] || fail "gather-three-sites runs on one host"
    run_job plain no 6 0,1,2,0,1,2 || fail "plain run failed"
    run_job site yes 6 0,1,2,0,1,2 LONGPIPE_MPI_SITES=0,1,2,0,1,2 "LONGPIPE_STATS=$WORK/site.stats" ||
      fail "run with LongPipe failed"
    same plain site
    check_paths site 6 site "${GATHER_COLLECTIVES[@]}"
    ;;
  gather-fortran)
    [[ $MODE == local ]] || fail "gather-fortran runs on one host"
    run_job plain no 4 0,1,1,0 || fail "plain run failed"
    run_job site yes 4 0,1,1,0 LONGPIPE_MPI_SITES=0,1,1,0 "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site
    check_paths site 4 site "${GATHER_COLLECTIVES[@]}"
    ;;
  gather-four-ranks)
    [[ $MODE == two-site ]] || fail "gather-four-ranks runs across the emulated link"
    run_job plain no 4 0,0,1,1 || fail "plain run failed"
    run_job site yes 4 0,0,1,1 "LONGPIPE_STATS=$WORK/site.stats" LONGPIPE_RTT=10 || fail "run with LongPipe failed"
    same plain site
    check_paths site 4 site "${GATHER_COLLECTIVES[@]}"
    ;;
  nonblocking-five-ranks)
    [[ $MODE == local ]] || fail "nonblocking-five-ranks runs on one host"
    SITES=LONGPIPE_MPI_SITES=0,1,0,1,1
    run_job plain no 5 0,1,0,1,1 || fail "plain run failed"
    run_job site yes 5 0,1,0,1,1 "$SITES" "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    same plain site --stable
    check_paths site 5 site "${NONBLOCKING_COLLECTIVES[@]}"
    run_job site-again yes 5 0,1,0,1,1 "$SITES" || fail "second run with LongPipe failed"
    same site site-again
    run_job native yes 5 0,1,0,1,1 "$SITES" LONGPIPE_COLLECTIVES=native "LONGPIPE_STATS=$WORK/native.stats" ||
      fail "run with LONGPIPE_COLLECTIVES=native failed"
    same plain native
    check_paths native 5 native "${NONBLOCKING_COLLECTIVES[@]}"
    ;;
  nonblocking-fortran)
    [[ $MODE == local ]] || fail "nonblocking-fortran runs on one host"
    run_job plain no 3 0,1,1 || fail "plain run failed"
    run_job site yes 3 0,1,1 LONGPIPE_MPI_SITES=0,1,1 "LONGPIPE_STATS=$WORK/site.stats" || fail "run with LongPipe failed"
    # Rank 0 and the last rank print: mpirun forwards the two ranks' lines in either order.
    diff -u <(sort "$WORK/plain.out") <(sort "$WORK/site.out") >&2 || fail "transcripts plain and site differ"
    say "transcripts plain and site identical ($(wc -l <"$WORK/plain.out") lines, sorted)"
    check_paths site 3 site MPI_Allreduce MPI_Ibarrier MPI_Ibcast MPI_Iallreduce MPI_Ireduce MPI_Igather \
      MPI_Iscatter MPI_Iscatterv MPI_Iallgather MPI_Iallgatherv MPI_Ialltoall MPI_Ireduce_scatter_block \
      MPI_Igatherv MPI_Ialltoallv MPI_Ialltoallw MPI_Iscan MPI_Iexscan
    ;;
  nonblocking-four-ranks)
    [[ $MODE == two-site ]] || fail "nonblocking-four-ranks runs across the emulated link"
    run_job plain no 4 0,0,1,1 || fail "plain run failed"
    run_job site yes 4 0,0,1,1 "LONGPIPE_STATS=$WORK/site.stats" LONGPIPE_RTT=10 || fail "run with LongPipe failed"
    same plain site --stable
    check_paths site 4 site "${NONBLOCKING_COLLECTIVES[@]}"
    ;;
  *) fail "unknown scenario $SCENARIO" ;;
esac
echo "PASS: $MODE $SCENARIO"
