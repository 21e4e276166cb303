#!/usr/bin/env bash
# run_communicators.sh MODE SCENARIO: communicators under LongPipe's MPI front end, with and without
# LD_PRELOAD=liblongpipe.so; the transcripts must be identical.
#
#   MODE      local     mpirun on this host; sites forced with LONGPIPE_MPI_SITES
#             two-site  apps/mpi-sites across the emulated link of the ctest fixture: ranks 0,1 on
#                       site-a, 2,3 on site-b, sites found automatically
#   SCENARIO  communicators  front_end_communicators.c, 4 ranks, sites {0,1} {2,3}: communicators of
#                            every kind, one tag on all of them at once, a free with a receive pending
#                            while another is made; the program counts the collectives over both
#                            sites that LongPipe's registration issues while a communicator is made
#                            (its transcript must say 0) and the communicators it makes over both
#                            sites (none); LongPipe carried the inter-site messages
#             spawn          front_end_spawn.c (local only): 2 parents at two sites spawn 2 children;
#                            messages, a collective and a merge over the intercommunicator (the
#                            children run on Open MPI alone: nothing may hang)
#
# Environment: LONGPIPE_LIBRARY, MPI_FRONT_END_COMMUNICATORS, MPI_FRONT_END_SPAWN.
set -euo pipefail

MODE=${1:?usage: run_communicators.sh local|two-site SCENARIO}
SCENARIO=${2:?usage: run_communicators.sh MODE communicators|spawn}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
# How long one run may take before it counts as hung.
readonly RUN_SECONDS=180

# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"
# shellcheck source=mpi_job.sh
source "$HERE/mpi_job.sh"

WORK=$(mktemp -d /tmp/lp-mpi-comm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# run_both RANKS PROGRAM ARGS...: without and with the preload (extra -x NAME=VALUE from $JOB_ENV);
# fails naming a hang (status 124/137) or a failure, shows stderr.
run_both() {
  local ranks=$1 rc
  shift
  for preload in no yes; do
    local env=("${JOB_ENV[@]}")
    [[ $preload == yes ]] && env+=(LONGPIPE_STATS="$WORK/stats.json" LONGPIPE_RTT=10)
    say "$MODE: ${1##*/} $([[ $preload == yes ]] && echo "with LD_PRELOAD=${LIBRARY##*/}" || echo "without LongPipe")"
    rc=0
    mpi_job "$preload" "$ranks" "${env[@]}" -- "$@" >"$WORK/$preload.out" 2>"$WORK/$preload.err" || rc=$?
    if ((rc != 0)); then
      cat "$WORK/$preload.out" "$WORK/$preload.err" >&2
      [[ $rc -ne 124 && $rc -ne 137 ]] || fail "the job (preload: $preload) hung: no end within $RUN_SECONDS s"
      fail "the job (preload: $preload) failed with status $rc"
    fi
  done
  [[ -s $WORK/no.out ]] || fail "empty transcript"
  diff -u "$WORK/no.out" "$WORK/yes.out" >&2 || fail "transcripts differ"
  say "transcripts identical ($(wc -l <"$WORK/no.out") lines)"
}

case $SCENARIO in
  communicators)
    PROGRAM=${MPI_FRONT_END_COMMUNICATORS:?MPI_FRONT_END_COMMUNICATORS must name the test program}
    # Open MPI's treematch topology component (chosen for the program's reordering
    # MPI_Dist_graph_create) now and then leaves every rank spinning in ompi_comm_nextcid, with or
    # without LongPipe; both runs use Open MPI's basic topology component instead.
    JOB_ENV=(OMPI_MCA_topo=^treematch)
    arguments=()
    [[ $MODE == local ]] && JOB_ENV+=(LONGPIPE_MPI_SITES=0,0,1,1)
    # Across the emulated link Open MPI alone hangs in the program's MPI_Dist_graph_create after
    # its MPI_Comm_split_type: the program leaves the split_type out there.
    [[ $MODE == two-site ]] && arguments+=(two-site)
    run_both 4 "$PROGRAM" "${arguments[@]}"
    grep -q '^rank 0: communicator registration crossed the sites 0 times$' "$WORK/yes.out" ||
      fail "registering communicators issued collectives over both sites: $(grep -h 'while making' "$WORK/yes.err" | sort | uniq -c)"
    # LongPipe's site sub-communicators are made by each site's ranks alone: none over both sites.
    [[ $(grep -c 'LongPipe made 0 communicators over both sites' "$WORK/yes.err") == 4 ]] ||
      fail "LongPipe made communicators over both sites: $(grep -h 'LongPipe made' "$WORK/yes.err" | sort | uniq -c)"
    say "no rank's LongPipe made a communicator over both sites"
    grep -q 'idup: rank 0 of 4' "$WORK/yes.out" || fail "the idup'd communicator is missing"
    # Rank 0 sends to ranks 2 and 3 on every communicator they share with it: at least 40 messages.
    python3 "$HERE/longpipe_statistics.py" "$WORK/stats.json" 0,0,1,1 --rank0-sent 40 || fail "LongPipe statistics"
    ;;
  spawn)
    [[ $MODE == local ]] || fail "spawn runs on one host"
    PROGRAM=${MPI_FRONT_END_SPAWN:?MPI_FRONT_END_SPAWN must name the test program}
    # The parents' sites; the children are another job (LongPipe stays off in them).
    JOB_ENV=(LONGPIPE_MPI_SITES=0,1)
    run_both 2 "$PROGRAM"
    [[ $(grep -c 'messages right on its dup' "$WORK/yes.out") == 4 ]] || fail "not every process reported"
    ! grep -v '4 of 4 messages right' "$WORK/yes.out" | grep -q 'messages right' || fail "a message went astray"
    ;;
  *)
    fail "unknown scenario $SCENARIO"
    ;;
esac
