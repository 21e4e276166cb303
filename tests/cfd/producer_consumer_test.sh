#!/usr/bin/env bash
# cfd-producer and two cfd-consumers over one local pvmd (no namespaces, no link emulation):
# every frame arrives complete and in order at each consumer, the PNGs decode and are not blank,
# the producer prints the consumers' summaries as JSON and CSV, and bad input is a clear error.
# Usage: producer_consumer_test.sh BIN_DIR   (the folder with cfd-producer, cfd-consumer, cfd-png-check)
set -euo pipefail

BIN=${1:?usage: $0 BIN_DIR}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# shellcheck source=common.sh
source "$HERE/common.sh"
WORK=$(mktemp -d /tmp/cfd-pvm-test.XXXXXX)
export PVM_ALLOW_ROOT=1 PVM_ROOT=${PVM_ROOT:-/usr/lib/pvm3} PVM_TMP=$WORK/pvm
mkdir -p "$PVM_TMP"
PVMD_PID=

cleanup() {
  if [[ -n "$PVMD_PID" ]] && kill -0 "$PVMD_PID" 2>/dev/null; then
    echo halt | timeout 10 pvm >/dev/null 2>&1 || true
    sleep 0.5
    kill "$PVMD_PID" 2>/dev/null || true
    wait "$PVMD_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A pvmd of our own (PVM_TMP keeps it apart from any other pvmd on this machine).
pvmd >"$WORK/pvmd.out" 2>&1 &
PVMD_PID=$!
for _ in $(seq 50); do [[ -s "$WORK/pvmd.out" ]] && break; sleep 0.1; done
[[ -s "$WORK/pvmd.out" ]] || fail "pvmd did not start: $(cat "$WORK/pvmd.out")"

FRAMES=12
"$BIN/cfd-producer" --frames $FRAMES --grid 128x64 --steps-per-frame 40 --warmup-steps 1500 --consumers 2 \
  --slow-ms 0,30 --render-every 1 --out "$WORK/out" --json "$WORK/result.json" --csv "$WORK/result.csv" \
  --summary-timeout 120 >"$WORK/producer.out" 2>&1 || { cat "$WORK/producer.out"; fail "cfd-producer failed"; }
cat "$WORK/producer.out"

# Each consumer's summary, as the producer received it: complete and in order.
"$HERE/check_result.py" "$WORK/result.json" $FRAMES 2 || fail "the consumers' summaries"

[[ $(wc -l <"$WORK/result.csv") -eq 3 ]] || fail "CSV should hold a header and one row per consumer"
for i in 0 1; do check_pngs "$BIN" "$WORK/out" $i $FRAMES; done
echo "PNGs: $FRAMES frames and a contact sheet per consumer, all decode and show the field"

# Bad input is a clear error that names the option, before anything is spawned.
if "$BIN/cfd-producer" --frames 0 >"$WORK/bad.out" 2>&1; then fail "--frames 0 was accepted"; fi
grep -q -- "--frames" "$WORK/bad.out" || fail "the error does not name --frames: $(cat "$WORK/bad.out")"
if "$BIN/cfd-producer" --display sometimes >"$WORK/bad.out" 2>&1; then fail "--display sometimes was accepted"; fi
grep -q -- "--display must be all or live" "$WORK/bad.out" || fail "the error does not name --display: $(cat "$WORK/bad.out")"
if "$BIN/cfd-producer" --grid 64x64 --re 5000 >"$WORK/bad.out" 2>&1; then fail "an unstable flow was accepted"; fi
grep -q "relaxation time" "$WORK/bad.out" || fail "unclear error for an unstable flow: $(cat "$WORK/bad.out")"
if "$BIN/cfd-producer" --consumers 2 --consumer-host a,b,c >"$WORK/bad.out" 2>&1; then fail "3 hosts for 2 consumers were accepted"; fi
grep -q -- "--consumer-host: 3 hosts for 2 consumers" "$WORK/bad.out" || fail "the error does not name --consumer-host: $(cat "$WORK/bad.out")"
if "$BIN/cfd-consumer" --out "$WORK/orphan" >"$WORK/bad.out" 2>&1; then fail "a consumer without a parent ran"; fi
grep -q "spawned by cfd-producer" "$WORK/bad.out" || fail "unclear error for an orphan consumer: $(cat "$WORK/bad.out")"
echo "bad input: clear errors"
echo PASS
