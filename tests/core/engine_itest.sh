#!/usr/bin/env bash
# Integration tests of the transport engine across the emulated link (run by ctest inside a
# longpipe_wan_fixture, so LP_WAN_INSTANCE names the link). Each check fails loudly.
#   engine_itest.sh reset       connections killed mid-stream (ss -K): nothing lost or duplicated (one stream)
#   engine_itest.sh reset-striped   the same with LONGPIPE_STREAMS=3 connections, striped round robin
#   engine_itest.sh wrong-key   a client with the wrong key is refused, counted, and told why
#   engine_itest.sh garbage     garbage and truncated frames close only their own connection
#   engine_itest.sh dead-peer   a peer killed with SIGKILL is reported within the dead-peer timeout
set -euo pipefail

WAN=${LONGPIPE_WAN:-$(cd "$(dirname "$0")/../../netem" && pwd)/wan}
BUILD=${LONGPIPE_BUILD_DIR:?LONGPIPE_BUILD_DIR must name the build tree}
PROBE=$BUILD/tests/core/lp-engine-probe
PYTHON=/usr/bin/python3
PORT=7601
WORK=$(mktemp -d)
PIDS=()

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Short timers: a test link has a 40 ms round trip.
export LONGPIPE_KEY=integration-test-key LONGPIPE_RTT=40 LONGPIPE_BANDWIDTH=50 LONGPIPE_PIN=off
export LONGPIPE_KEEPALIVE_MS=300 LONGPIPE_DEAD_PEER_MS=3000 LONGPIPE_CONNECT_RETRY_MAX_MS=500

# start_in SITE NAME CMD...: runs CMD in a site in the background; output in $WORK/NAME.out.
start_in() {
  local site=$1 name=$2
  shift 2
  "$WAN" exec "$site" "$@" >"$WORK/$name.out" 2>&1 &
  PIDS+=($!)
  eval "${name}_pid=$!"
}

wait_for_listen() {
  local i
  for i in $(seq 1 100); do
    grep -q '^listening' "$WORK/$1.out" 2>/dev/null && return 0
    sleep 0.1
  done
  cat "$WORK/$1.out" >&2
  fail "$1 did not start listening"
}

# json_field FILE FIELD: the first integer value of "FIELD": in the last stats line of FILE.
json_field() {
  grep '^stats ' "$1" | tail -n 1 | grep -oE "\"$2\":[0-9]+" | head -n 1 | cut -d: -f2
}

check_reset() {
  local count=30000 size=700 kills=0
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count $count --size $size --timeout-s 120
  wait_for_listen receiver
  # A steady stream (about 12 s) so the resets land mid-stream.
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count $count --size $size --interval-us 400 --timeout-s 120
  sleep 2
  for _ in 1 2 3; do
    # Kill the established LongPipe connection(s) in site a, as a reset on the path would.
    if "$WAN" exec a ss -K dst 10.77.0.2 dport = ":$PORT" | grep -q ESTAB; then kills=$((kills + 1)); fi
    sleep 1.5
  done
  "$WAN" exec b ss -K src 10.77.0.2 sport = ":$PORT" >/dev/null || true
  ((kills >= 2)) || fail "ss -K found no established connection to kill (kills: $kills)"
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "sender did not get everything acknowledged"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "receiver saw loss, duplication or corruption"; }
  grep '^OK' "$WORK/receiver.out"
  local reconnects
  reconnects=$(json_field "$WORK/sender.out" reconnects)
  ((reconnects >= 2)) || fail "sender reports $reconnects reconnects after $kills kills"
  local streams
  streams=$(json_field "$WORK/sender.out" streams)
  ((streams == ${LONGPIPE_STREAMS:-1})) || fail "the session ended with $streams streams, expected ${LONGPIPE_STREAMS:-1}"
  pass "$count messages over $streams stream(s) across $kills connection kills ($reconnects reconnects): none lost, none duplicated, order kept"
}

check_wrong_key() {
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count 1 --size 10 --timeout-s 30
  wait_for_listen receiver
  LONGPIPE_KEY=not-the-key "$WAN" exec a "$PROBE" send --peer "site-b:$PORT" --count 3 --size 10 \
    --expect-failure authentication --timeout-s 10 >"$WORK/intruder.out" 2>&1 ||
    { cat "$WORK/intruder.out" >&2; fail "the client with the wrong key was not told it was refused"; }
  grep -E '^(reason|OK)' "$WORK/intruder.out"
  # The good client still gets through afterwards.
  "$WAN" exec a "$PROBE" send --peer "site-b:$PORT" --count 1 --size 10 --timeout-s 10 >"$WORK/good.out" 2>&1 ||
    { cat "$WORK/good.out" >&2; fail "the client with the right key was refused too"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "receiver did not get the good client's message"; }
  local rejected
  rejected=$(json_field "$WORK/receiver.out" rejected_connections)
  ((rejected >= 1)) || fail "the server counted $rejected rejected connections"
  pass "wrong key refused and reported to the client; server counted $rejected rejected connection(s); right key accepted"
}

check_garbage() {
  local count=6000 size=300
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count $count --size $size --timeout-s 60
  wait_for_listen receiver
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count $count --size $size --interval-us 1000 --timeout-s 60
  sleep 1
  # Random bytes, a valid header announcing more than it delivers (truncated), an oversized length,
  # and an unknown version: each on its own connection, while the good session is running.
  "$WAN" exec a "$PYTHON" - "$PORT" <<'PY'
import os, socket, struct, sys, time
port = int(sys.argv[1])
def connection(payload, linger=0.3):
    s = socket.create_connection(("site-b", port), timeout=5)
    s.sendall(payload)
    time.sleep(linger)
    s.close()
connection(os.urandom(4096))
connection(struct.pack(">HBBI", 0x4C50, 1, 1, 100) + b"x" * 10)            # truncated HELLO
connection(struct.pack(">HBBI", 0x4C50, 1, 4, 0x7fffffff))                   # DATA before auth, huge
connection(struct.pack(">HBBI", 0x4C50, 9, 1, 10) + b"y" * 10)               # unknown version
connection(struct.pack(">HBBI", 0x4C50, 1, 42, 0))                           # unknown type
PY
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "the good session stalled after the garbage"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "the good session lost or duplicated messages"; }
  local malformed reconnects
  malformed=$(grep '^stats ' "$WORK/receiver.out" | grep -oE '"malformed_frames":[0-9]+' | head -n 1 | cut -d: -f2)
  reconnects=$(json_field "$WORK/sender.out" reconnects)
  ((malformed >= 5)) || fail "the server counted $malformed malformed frames, expected 5"
  ((reconnects == 0)) || fail "the good session reconnected $reconnects times: garbage disturbed it"
  pass "5 bad connections closed and counted ($malformed malformed); the good session delivered $count messages undisturbed"
}

check_dead_peer() {
  local dead_ms=$LONGPIPE_DEAD_PEER_MS slack_ms=1500
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count 1000000 --size 100 --timeout-s 60
  wait_for_listen receiver
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count 5000 --size 100 --interval-us 2000 \
    --expect-failure "sign of life" --timeout-s 30
  sleep 2
  local killed_ms
  killed_ms=$(date +%s%3N)
  kill -9 "$receiver_pid"
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "the dead peer was not reported"; }
  local reported_ms elapsed
  reported_ms=$(awk '/^failure_epoch_ms/ {print $2}' "$WORK/sender.out")
  elapsed=$((reported_ms - killed_ms))
  grep -E '^(reason|OK)' "$WORK/sender.out"
  ((elapsed <= dead_ms + slack_ms)) || fail "reported ${elapsed} ms after the kill (dead-peer timeout ${dead_ms} ms)"
  pass "peer killed with SIGKILL reported after ${elapsed} ms (LONGPIPE_DEAD_PEER_MS=${dead_ms}); sends then fail clearly"
}

case ${1:-} in
  reset) LONGPIPE_STREAMS=1 check_reset ;;
  reset-striped) LONGPIPE_STREAMS=3 LONGPIPE_SMALL_MESSAGE=0 check_reset ;;
  wrong-key) check_wrong_key ;;
  garbage) check_garbage ;;
  dead-peer) check_dead_peer ;;
  *) echo "usage: $0 reset|wrong-key|garbage|dead-peer" >&2; exit 2 ;;
esac
