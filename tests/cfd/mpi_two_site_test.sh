#!/usr/bin/env bash
# cfd-mpi across the emulated link of the ctest fixture (netem/wan, instance $LP_WAN_INSTANCE): the
# producer (rank 0) on site-a, one consumer (rank 1) on site-b, one mpirun job (apps/mpi-sites).
# Every frame arrives once, complete and in order, on site-b; its PNGs decode and are not blank.
#
# MODE openmpi: Open MPI alone (its TCP path across the link).
# MODE longpipe: the same binary under LD_PRELOAD=liblongpipe.so (mpi-sites --preload), and
#   LongPipe, not Open MPI, carried the frames: the producer's LONGPIPE_STATS shows a session to the
#   consumer on site-b that sent every frame, none dropped, no failure.
# Usage: mpi_two_site_test.sh BIN_DIR MODE [LIBLONGPIPE]
set -euo pipefail

BIN=${1:?usage: $0 BIN_DIR openmpi|longpipe [LIBLONGPIPE]}
MODE=${2:?usage: $0 BIN_DIR openmpi|longpipe [LIBLONGPIPE]}
LIBRARY=${3:-}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MPI_SITES=$ROOT/apps/mpi-sites/mpi-sites
# shellcheck source=common.sh
source "$HERE/common.sh"
: "${LP_WAN_INSTANCE:?run through ctest (the fixture sets LP_WAN_INSTANCE), or set it to a link that is up}"

readonly FRAMES=30 SITE_B=site-b
# The job takes ~10 s at 25 ms each way; the limit only stops a hang (mpi-sites ends every process).
readonly RUN_SECONDS=120

WORK=$(mktemp -d /tmp/cfd-mpi-two-site-test.XXXXXX)
status=1
trap 'remove_work_unless_failed "$status"' EXIT

launch=()
case $MODE in
  openmpi) ;;
  longpipe)
    [[ -f $LIBRARY ]] || fail "no LongPipe library at '$LIBRARY'"
    # One statistics file per rank (the MPI front end puts the rank in place of %r): rank 0's is the producer's.
    launch=(--preload "$LIBRARY" -x "LONGPIPE_STATS=$WORK/stats.%r.json") ;;
  *) fail "unknown mode '$MODE': expected openmpi or longpipe" ;;
esac

run=0
"$MPI_SITES" --timeout "$RUN_SECONDS" -n 1 "${launch[@]}" "$BIN/cfd-mpi" --frames $FRAMES --grid 128x64 \
  --steps-per-frame 20 --warmup-steps 1000 --out "$WORK/out" --json "$WORK/result.json" --summary-timeout 60 \
  >"$WORK/job.out" 2>&1 || run=$?
cat "$WORK/job.out"
((run == 0)) || fail "the MPI job exited with status $run"

stats=()
if [[ $MODE == longpipe ]]; then
  [[ -s $WORK/stats.0.json ]] || fail "the producer (rank 0) wrote no LongPipe statistics"
  stats=(--longpipe-stats "$WORK/stats.0.json")
fi
"$HERE/check_result.py" "$WORK/result.json" $FRAMES 1 --host $SITE_B "${stats[@]}" ||
  fail "the run did not deliver every frame in order on $SITE_B ($MODE)"
check_consumers_pngs "$BIN" "$WORK/out" "$WORK/result.json" 1
echo "PNGs: one per frame and a contact sheet, all decode and show the field"
status=0
echo PASS
