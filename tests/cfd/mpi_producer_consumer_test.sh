#!/usr/bin/env bash
# cfd-mpi as two ranks of one mpirun job on this host, the producer (rank 0) and a consumer (Open
# MPI alone, no namespaces, no link emulation): every frame arrives complete and in order, the PNGs
# decode and are not blank, the producer prints the consumer's summary as JSON and CSV, and bad
# input or a wrong launch is a clear error. Then the same with a live display (--display live:
# rendering on a thread of the consumer rank, which makes no MPI call) slowed to 30 ms per frame
# against a burst of frames: every frame received in order, the display shows the newest ones in
# order and counts the others as skipped (check_live.py).
# Usage: mpi_producer_consumer_test.sh BIN_DIR   (cfd-mpi, cfd-png-check)
set -euo pipefail

BIN=${1:?usage: $0 BIN_DIR}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# shellcheck source=common.sh
source "$HERE/common.sh"
WORK=$(mktemp -d /tmp/cfd-mpi-test.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# The job's limit: it takes ~2 s; this only stops a hang.
readonly RUN_SECONDS=120
MPIRUN=(timeout "$RUN_SECONDS" mpirun --allow-run-as-root --oversubscribe)

FRAMES=12
"${MPIRUN[@]}" -np 2 "$BIN/cfd-mpi" --frames $FRAMES --grid 128x64 --steps-per-frame 40 --warmup-steps 1500 \
  --slow-ms 30 --out "$WORK/out" --json "$WORK/result.json" --csv "$WORK/result.csv" --summary-timeout 60 \
  >"$WORK/producer.out" 2>&1 || { cat "$WORK/producer.out"; fail "the MPI job failed"; }
cat "$WORK/producer.out"

# The consumer's summary, as the producer received it: complete and in order.
"$HERE/check_result.py" "$WORK/result.json" $FRAMES 1 || fail "the consumer's summary"
[[ $(wc -l <"$WORK/result.csv") -eq 2 ]] || fail "CSV should hold a header and one row"
grep -q ',mpi,' "$WORK/result.csv" || fail "the CSV does not name the route mpi"
check_pngs "$BIN" "$WORK/out" 0 $FRAMES
echo "PNGs: $FRAMES frames and a contact sheet, all decode and show the field"

# A live display slower than a burst of 40 frames (one solver step each).
"${MPIRUN[@]}" -np 2 "$BIN/cfd-mpi" --frames 40 --grid 128x64 --steps-per-frame 1 --warmup-steps 100 \
  --slow-ms 30 --display live --out "$WORK/live" --json "$WORK/live.json" --summary-timeout 60 \
  >"$WORK/live.out" 2>&1 || { cat "$WORK/live.out"; fail "the MPI job with a live display failed"; }
cat "$WORK/live.out"
"$HERE/check_result.py" "$WORK/live.json" 40 1 || fail "the live consumer's summary"
"$HERE/check_live.py" "$WORK/live.json" "$WORK/live" --slow 0 || fail "the live display did not show the newest frames"
check_consumers_pngs "$BIN" "$WORK/live" "$WORK/live.json" 1

# Bad input and wrong launches are clear errors that say what to do.
expect_error() {  # PATTERN COMMAND...: the command fails and its output matches PATTERN
  local pattern=$1
  shift
  if "$@" >"$WORK/bad.out" 2>&1; then fail "accepted: $*"; fi
  grep -q -- "$pattern" "$WORK/bad.out" || fail "no '$pattern' in the error of $*: $(cat "$WORK/bad.out")"
}
expect_error "--frames" "${MPIRUN[@]}" -np 2 "$BIN/cfd-mpi" --frames 0
expect_error "--display" "${MPIRUN[@]}" -np 2 "$BIN/cfd-mpi" --display sometimes
expect_error "relaxation time" "${MPIRUN[@]}" -np 2 "$BIN/cfd-mpi" --grid 64x64 --re 5000
expect_error "at least 2 ranks" "${MPIRUN[@]}" -np 1 "$BIN/cfd-mpi" --frames 1
echo "bad input: clear errors"
echo PASS
