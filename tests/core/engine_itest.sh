#!/usr/bin/env bash
# Integration tests of the transport engine across the emulated link (run by ctest inside a
# longpipe_wan_fixture, so LP_WAN_INSTANCE names the link). Each check fails loudly.
#   engine_itest.sh reset       connections killed mid-stream (ss -K): nothing lost or duplicated (one stream)
#   engine_itest.sh reset-striped   the same with LONGPIPE_STREAMS=3 connections, striped round robin
#   engine_itest.sh wrong-key   a client with the wrong key is refused, counted, and told why
#   engine_itest.sh garbage     garbage and truncated frames close only their own connection
#   engine_itest.sh garbage-authenticated   a key holder's garbage after a valid handshake (random
#                               bytes, tampered, replayed, oversized, truncated sealed frames) closes
#                               and counts only its own connections
#   engine_itest.sh dead-peer   a peer killed with SIGKILL is reported as dead, with the messages lost
#   engine_itest.sh spill       a fresh session's burst, larger than the first window, spilled onto
#                               the spill streams: nothing lost, duplicated or reordered
#   engine_itest.sh spill-large the same with 64 KiB messages, which fit no initial window whole
#   engine_itest.sh dial-storm  16 fresh engines (as 16 processes) dial one acceptor at one instant,
#                               10 connections each: every session delivers everything in order, none
#                               of its connections turned away
# Faults across the link (each also checks that nothing is lost, duplicated or reordered):
#   engine_itest.sh outage      the link drops everything mid-stream for longer than the dead-peer timeout
#                               (and 10x the RTO): no failure, the silence probed, nothing lost afterwards
#   engine_itest.sh restart     the peer process is killed mid-stream and a new one started: the loss is
#                               reported (reason, messages lost), the new process gets everything
#   engine_itest.sh flood       hundreds of unauthenticated connections while a session runs
#   engine_itest.sh paused      the receiving application takes nothing for several silence thresholds
#                               (its engine stops reading: back-pressure): no probe, no re-send
#   engine_itest.sh freeze      the whole host stops (link emulator and both processes) for longer than
#                               the silence threshold: not taken for a silent path (no probe, no re-send)
# The datagram carrier (LONGPIPE_CARRIER=udp), on its own link with loss and reordering:
#   engine_itest.sh datagram    small and large (multi-datagram) messages: none lost, none duplicated,
#                               order kept; forged datagrams to the UDP port are dropped and counted
set -euo pipefail

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"
# shellcheck source=../lib/link_outage.sh
source "$(dirname "$0")/../lib/link_outage.sh"
need_build_dir
PROBE=$BUILD/tests/core/lp-engine-probe
GARBAGE_PEER=$BUILD/tests/core/lp-garbage-peer
PYTHON=/usr/bin/python3
PORT=7601
WORK=$(mktemp -d)
OUTAGE_ON=""
FROZEN=()
# Before the processes are killed: the link must carry again and stopped processes must run.
cleanup_first() {
  [[ -z $OUTAGE_ON ]] || outage_end
  ((${#FROZEN[@]} == 0)) || kill -CONT "${FROZEN[@]}" 2>/dev/null || true
}
trap itest_cleanup EXIT

# Short timers: a test link has a 40 ms round trip.
export LONGPIPE_KEY=integration-test-key LONGPIPE_RTT=40 LONGPIPE_BANDWIDTH=50 LONGPIPE_PIN=off
export LONGPIPE_KEEPALIVE_MS=300 LONGPIPE_DEAD_PEER_MS=3000 LONGPIPE_CONNECT_RETRY_MAX_MS=500
# The user's warm-start cache stays untouched (and earlier runs do not change this one).
export LONGPIPE_PATH_CACHE=off

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

# start_good_session COUNT SIZE INTERVAL_US TIMEOUT_S: a receiver in site b that checks every
# numbered message, and a sender in site a streaming them to it (receiver_pid, sender_pid).
start_good_session() {
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count "$1" --size "$2" --timeout-s "$4"
  wait_for_listen receiver
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count "$1" --size "$2" --interval-us "$3" --timeout-s "$4"
}

# json_field FILE FIELD: the first integer value of "FIELD": in the last stats line of FILE.
json_field() {
  grep '^stats ' "$1" | tail -n 1 | grep -oE "\"$2\":[0-9]+" | head -n 1 | cut -d: -f2
}

check_reset() {
  local count=20000 size=700 kills=0
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count $count --size $size --timeout-s 120
  wait_for_listen receiver
  # A steady stream (about 8 s) so the resets, 2 to 6.5 s after its start, land mid-stream.
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count $count --size $size --interval-us 400 --timeout-s 120
  sleep 2
  for _ in 1 2 3; do
    # Kill the established LongPipe connection(s) in site a, as a reset on the path would.
    if "$WAN" exec a ss -K dst 10.77.0.2 dport = ":$PORT" | grep -q ESTAB; then kills=$((kills + 1)); fi
    sleep 1.5
  done
  "$WAN" exec b ss -K src 10.77.0.2 sport = ":$PORT" >/dev/null || true
  ((kills >= 2)) || fail "ss -K found no established connection to kill (kills: $kills)"
  kill -0 "$sender_pid" 2>/dev/null || fail "the stream had ended before the last reset: lengthen it"
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

# One datagram session: COUNT messages of SIZE bytes, everything checked by the receiver.
datagram_session() {
  local count=$1 size=$2 interval=$3
  LONGPIPE_CARRIER=udp start_in b receiver "$PROBE" receive --listen ":$PORT" --count "$count" --size "$size" --timeout-s 120
  wait_for_listen receiver
  LONGPIPE_CARRIER=udp start_in a sender "$PROBE" send --peer "site-b:$PORT" --count "$count" --size "$size" \
    --interval-us "$interval" --timeout-s 120
}

check_datagram() {
  # Small messages, one datagram each, while forged datagrams hit the receiver's UDP port.
  datagram_session 5000 1000 200
  sleep 1
  "$WAN" exec a "$PYTHON" - "$PORT" <<'PY'
import os, socket, struct, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for n in range(200):
    s.sendto(os.urandom(n * 7 % 1472), ("site-b", port))                                   # garbage
    s.sendto(b"LD\x01\x00" + struct.pack(">Q", n) + os.urandom(60), ("site-b", port))       # a forged datagram
PY
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "sender did not get everything acknowledged (udp)"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "receiver saw loss, duplication or corruption (udp)"; }
  grep '^OK' "$WORK/receiver.out"
  grep -q '"carrier":"udp"' "$WORK/sender.out" || fail "the session did not use the datagram carrier"
  local retransmitted refused
  retransmitted=$(json_field "$WORK/sender.out" messages_retransmitted)
  ((retransmitted > 0)) || fail "no retransmission on a lossy link: was the loss applied?"
  refused=$(json_field "$WORK/receiver.out" refused_frames)
  # 400 sent across 5 % loss: about 380 arrive.
  ((refused >= 300)) || fail "the receiver counted $refused refused datagrams of 400 forged"
  pass "5000 x 1000 B over udp with loss and reordering: none lost, none duplicated, order kept ($retransmitted units re-sent, $refused forged datagrams dropped)"
  # Large messages: each split into ~190 datagrams, every one of which must arrive.
  datagram_session 60 262144 0
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "sender did not get everything acknowledged (udp, 256 KiB)"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "receiver saw loss, duplication or corruption (udp, 256 KiB)"; }
  grep '^OK' "$WORK/receiver.out"
  pass "60 x 256 KiB over udp with loss and reordering: none lost, none duplicated, order kept"
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
  start_good_session $count $size 1000 60
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
VERSION = 2  # wire_frame.h kProtocolVersion
connection(os.urandom(4096))
connection(struct.pack(">HBBI", 0x4C50, VERSION, 1, 100) + b"x" * 10)      # truncated HELLO
connection(struct.pack(">HBBI", 0x4C50, VERSION, 4, 0x7fffffff))           # DATA before auth, huge
connection(struct.pack(">HBBI", 0x4C50, 9, 1, 10) + b"y" * 10)               # unknown version
connection(struct.pack(">HBBI", 0x4C50, VERSION, 42, 0))                   # unknown type
PY
  expect_undisturbed "the garbage"
  local malformed
  malformed=$(json_field "$WORK/receiver.out" malformed_frames)
  ((malformed >= 5)) || fail "the server counted $malformed malformed frames, expected 5"
  pass "5 bad connections closed and counted ($malformed malformed); the good session delivered $count messages undisturbed"
}

check_garbage_authenticated() {
  local count=6000 size=300
  start_good_session $count $size 1000 60
  sleep 1
  # Five connections that each complete a valid handshake with the job key, then send garbage
  # (lp-garbage-peer, garbage_peer_itest.cpp): each must be closed by the receiver.
  "$WAN" exec a "$GARBAGE_PEER" --peer "site-b:$PORT" --claim-host site-a >"$WORK/garbage.out" 2>&1 ||
    { cat "$WORK/garbage.out" >&2; fail "a garbage connection did not complete its handshake or was not closed"; }
  cat "$WORK/garbage.out"
  kill -0 "$sender_pid" 2>/dev/null || fail "the stream had ended before the garbage did: lengthen it"
  expect_undisturbed "the garbage after a handshake"
  # Engine-wide totals (the attackers' sessions may be forgotten by now): random, oversized and
  # truncated are malformed; tampered and replayed fail to open. Nothing else was malformed.
  local malformed refused accepted
  malformed=$(json_field "$WORK/receiver.out" malformed_frames)
  refused=$(json_field "$WORK/receiver.out" refused_frames)
  accepted=$(json_field "$WORK/receiver.out" accepted_connections)
  ((malformed == 3)) || fail "the receiver counted $malformed malformed frames, expected 3 (random, oversized, truncated)"
  ((refused == 2)) || fail "the receiver counted $refused refused frames, expected 2 (tampered, replayed)"
  ((accepted >= 6)) || fail "the receiver accepted $accepted connections, expected the session's and 5 garbage ones"
  # The good session, as its sender saw it (the receiver forgets it once the sender said goodbye):
  # one session, each of its streams established once (never closed and replaced), no garbage on it.
  local session
  session=$(grep '^stats ' "$WORK/sender.out" | tail -n 1 | grep -oE '\{"peer":"[^"]*"[^{]*')
  [[ $(grep -c . <<<"$session") == 1 ]] || fail "the sender has more than one session: $session"
  local streams spill established
  streams=$(grep -oE '"streams":[0-9]+' <<<"$session" | cut -d: -f2)
  spill=$(grep -oE '"spill_streams":[0-9]+' <<<"$session" | cut -d: -f2)
  established=$(grep -oE '"connections_established":[0-9]+' <<<"$session" | cut -d: -f2)
  ((streams >= 1 && established == streams + spill)) ||
    fail "the good session established $established connections for its $streams streams and $spill spill streams: one was replaced"
  grep -qE '"malformed_frames":0,"refused_frames":0,' <<<"$session" || fail "garbage was counted on the good session: $session"
  pass "5 garbage connections after valid handshakes closed and counted ($malformed malformed, $refused refused); the good session delivered $count messages, its $streams streams never closed or replaced"
}

# The dead peer is reported (the sender's --timeout-s is the hang guard) with a reason that names
# the silence and LONGPIPE_DEAD_PEER_MS, the messages it loses, and sends to it fail from then on.
# How soon after the kill it is reported is a number, measured by apps/bench/dead-peer.
check_dead_peer() {
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count 1000000 --size 100 --timeout-s 60
  wait_for_listen receiver
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count 5000 --size 100 --interval-us 2000 \
    --expect-failure "sign of life" --timeout-s 60
  sleep 2
  kill -9 "$receiver_pid"
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "the dead peer was not reported, or sends to it did not fail"; }
  grep -E '^(reason|lost|OK)' "$WORK/sender.out"
  grep -q "^reason no sign of life for ${LONGPIPE_DEAD_PEER_MS} ms (LONGPIPE_DEAD_PEER_MS)" "$WORK/sender.out" ||
    fail "the reason does not name the silence and LONGPIPE_DEAD_PEER_MS"
  local lost
  lost=$(awk '/^lost/ {print $2}' "$WORK/sender.out")
  ((lost > 0)) || fail "the peer killed mid-stream was reported with $lost messages lost"
  pass "peer killed with SIGKILL reported as dead (no sign of life for LONGPIPE_DEAD_PEER_MS=${LONGPIPE_DEAD_PEER_MS} ms), $lost messages lost; sends then fail clearly"
}

# sum_field FILE FIELD: the sum of every integer "FIELD": in the last stats line (engine and sessions).
sum_field() {
  grep '^stats ' "$1" | tail -n 1 | grep -oE "\"$2\":[0-9]+" | cut -d: -f2 | awk '{s += $1} END {print s + 0}'
}

# expect_undisturbed WHAT: the good sender and receiver of a disturbance test finished: every message
# arrived once, in order, intact, and the session never reconnected (WHAT did not disturb it).
expect_undisturbed() {
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "the good session stalled during $1"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "the good session lost or duplicated messages during $1"; }
  local reconnects
  reconnects=$(json_field "$WORK/sender.out" reconnects)
  ((reconnects == 0)) || fail "the good session reconnected $reconnects times: $1 disturbed it"
}


# The outage: no failure, every message once and in order afterwards (the receivers' --timeout-s
# is the hang guard), and the silence seen (the sender probed the path). How soon traffic resumes
# after the link returns is a number, measured by apps/bench/soak (outages.csv).
check_outage() {
  local outage_ms=2500 count=4000 size=300
  # The outage is longer than the dead-peer timeout (a silent path is not a dead peer), shortened
  # here to 1.5 s (5 keep-alive intervals), and than 10 x the RTO (its 200 ms floor on this 40 ms
  # round trip: TCP's retransmissions back off to a second and more meanwhile).
  local -x LONGPIPE_DEAD_PEER_MS=1500
  ((outage_ms > LONGPIPE_DEAD_PEER_MS && outage_ms > 10 * 200)) ||
    fail "the outage must outlast LONGPIPE_DEAD_PEER_MS and 10 x the RTO"
  start_good_session $count $size 1500 50
  sleep 2
  kill -0 "$sender_pid" 2>/dev/null || fail "the stream had ended before the outage: lengthen it"
  outage_begin
  sleep "$(awk -v ms=$outage_ms 'BEGIN {print ms / 1000}')"
  outage_end
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "the sender failed: an outage was taken for a dead peer, or messages were not acknowledged"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "receiver saw loss, duplication or corruption"; }
  grep -E '^(OK|longest_gap_ms)' "$WORK/receiver.out"
  local probes
  probes=$(sum_field "$WORK/sender.out" path_probes)
  ((probes > 0)) || fail "the sender never probed the silent path (path_probes $probes): did the outage happen?"
  pass "${outage_ms} ms outage (dead-peer timeout ${LONGPIPE_DEAD_PEER_MS} ms): $count messages, none lost or duplicated, no failure; the silence was probed ($probes path probes)"
}

check_restart() {
  local count=2500 size=200 second_port=$((PORT + 1))
  start_in b first "$PROBE" receive --listen ":$PORT" --count $count --size $size --timeout-s 40
  wait_for_listen first
  # The sender expects its first peer to be reported lost, then sends everything to the new process.
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count $count --size $size --interval-us 2000 \
    --expect-failure "sign of life" --then-peer "site-b:$second_port" --timeout-s 40
  sleep 2
  kill -9 "$first_pid"
  start_in b second "$PROBE" receive --listen ":$second_port" --count $count --size $size --timeout-s 40
  wait_for_listen second
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "the sender did not report the lost peer, or the new one did not acknowledge everything"; }
  wait "$second_pid" || { cat "$WORK/second.out" >&2; fail "the restarted receiver saw loss, duplication or corruption"; }
  grep -E '^(reason|lost|OK)' "$WORK/sender.out"
  local lost
  lost=$(awk '/^lost/ {print $2}' "$WORK/sender.out")
  ((lost > 0)) || fail "the sender reported the killed peer with $lost messages lost (it was killed mid-stream)"
  pass "killed peer reported with $lost messages lost; the restarted process received all $count, in order"
}

check_flood() {
  # More than the engine's 160 unauthenticated slots (Endpoint::kMaxHandshakingConnections), and a
  # third of them (silent) alone are more.
  local count=4000 size=300 flood=600 version
  # The HELLOs carry the protocol's version (wire_frame.h), else they are malformed and closed at once.
  version=$(sed -n 's/.*kProtocolVersion = \([0-9]*\);.*/\1/p' "$(dirname "$0")/../../libshim/core/wire/wire_frame.h")
  [[ -n $version ]] || fail "cannot read kProtocolVersion from wire_frame.h"
  start_good_session $count $size 1500 50
  sleep 1
  # Connections that never authenticate: silent, a lone header, a HELLO left hanging, all held open.
  # They are opened at once (non-blocking connects), so that far more than the limit are pending.
  "$WAN" exec a "$PYTHON" - "$PORT" "$flood" "$version" <<'PY'
import os, select, socket, struct, sys, time
port, flood, VERSION = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
address = socket.getaddrinfo("site-b", port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
HELLO, ENCRYPT = 1, 1
pending = []
for i in range(flood):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex(address)
    pending.append((i, s))
held = []
deadline = time.time() + 5
while pending and time.time() < deadline:
    _, writable, _ = select.select([], [s for _, s in pending], [], 0.5)
    for i, s in [p for p in pending if p[1] in writable]:
        pending.remove((i, s))
        if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
            s.close()  # refused or reset under load: also fine
            continue
        s.setblocking(True)
        if i % 3 == 1:
            s.send(struct.pack(">HBBI", 0x4C50, VERSION, HELLO, 200))  # a HELLO header, no payload
        elif i % 3 == 2:
            endpoint = b"site-a:%d" % (20000 + i)
            s.send(struct.pack(">HBBI", 0x4C50, VERSION, HELLO, 36 + len(endpoint)) + os.urandom(32) +
                   bytes([0, ENCRYPT]) + struct.pack(">H", len(endpoint)) + endpoint)  # HELLO, never the proof
        held.append(s)
time.sleep(3)
for s in held:
    s.close()
print("flood: %d connections held for 3 s" % len(held))
PY
  expect_undisturbed "the flood"
  local refused
  refused=$(json_field "$WORK/receiver.out" refused_busy)
  ((refused > 0)) || fail "the server refused none of $flood unauthenticated connections (limit: 160 at once)"
  pass "$flood unauthenticated connections ($refused refused beyond the limit); the good session delivered $count messages undisturbed"
}

# probes_and_resends: path probes of both ends (the receiver's while its session was up) and
# messages the sender re-sent.
probes_and_resends() {
  local receiver_probes
  # No session_stats line when the receiver's session was already gone (the sender's goodbye came
  # before the receiver printed): no probes of its own to count (a failing grep must not end the test).
  receiver_probes=$(grep '^session_stats ' "$WORK/receiver.out" | grep -oE '"path_probes":[0-9]+' | cut -d: -f2 |
    awk '{s += $1} END {print s + 0}') || true
  echo "$(($(sum_field "$WORK/sender.out" path_probes) + receiver_probes)) $(json_field "$WORK/sender.out" messages_retransmitted)"
}

# A receiving application busy elsewhere (as an MPI leader inside a step of its own site) takes
# nothing for several silence thresholds: its receive queue fills to the window, its engine stops
# reading, and TCP pushes back on the sender. That is back-pressure, not a silent path.
check_paused() {
  local pause_ms=3000 count=3000 size=16384
  export LONGPIPE_WINDOW_MESSAGES=256  # the receive queue fills within the pause
  start_in b receiver "$PROBE" receive --listen ":$PORT" --count $count --size $size --timeout-s 60 \
    --pause-after 100 --pause-ms $pause_ms
  wait_for_listen receiver
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --count $count --size $size --timeout-s 60
  expect_undisturbed "the pause"
  grep '^OK' "$WORK/receiver.out"
  local probes retransmitted
  read -r probes retransmitted < <(probes_and_resends)
  ((probes == 0 && retransmitted == 0)) ||
    fail "a receiver pausing ${pause_ms} ms was taken for a silent path: $probes path probes, $retransmitted messages re-sent"
  pass "receiver paused ${pause_ms} ms with a full receive queue: $count messages, none lost or duplicated, no probe, nothing re-sent"
}

# A freeze of the whole host, as seen on the shared 2-core test machine (the virtual machine stopped
# for about 4 s; even the real-time link emulator skipped its timers): the link emulator stops first
# (what had crossed is read meanwhile), then both processes, for several silence thresholds; then
# all continue at once. The path was never silent: the engines must not probe it or re-send, and
# every message arrives once, in order.
check_freeze() {
  local freeze_s=3 count=6000 size=300
  local emulator_pid_file=/run/longpipe/wan/lp${LP_WAN_INSTANCE:+-$LP_WAN_INSTANCE}/emulator.pid
  [[ -r $emulator_pid_file ]] || fail "no link emulator ($emulator_pid_file): the freeze needs the tun backend"
  start_good_session $count $size 1500 50
  sleep 2
  local emulator
  emulator=$(cat "$emulator_pid_file")
  FROZEN=("$emulator")
  kill -STOP "$emulator"
  sleep 0.2
  FROZEN+=("$sender_pid" "$receiver_pid")
  kill -STOP "$sender_pid" "$receiver_pid"
  sleep "$freeze_s"
  kill -CONT "${FROZEN[@]}"
  FROZEN=()
  expect_undisturbed "the freeze"
  grep '^OK' "$WORK/receiver.out"
  local probes retransmitted stalls
  read -r probes retransmitted < <(probes_and_resends)
  ((probes == 0 && retransmitted == 0)) ||
    fail "a ${freeze_s} s freeze of the host was taken for a silent path: $probes path probes, $retransmitted messages re-sent"
  stalls=$(json_field "$WORK/sender.out" engine_stalls)
  ((${stalls:-0} > 0)) || fail "the sender's engine did not count its ${freeze_s} s stop as a stall"
  pass "${freeze_s} s freeze of the host ($stalls stall(s) noticed): $count messages, none lost or duplicated, no probe, nothing re-sent"
}

# A fresh session's first COUNT messages of SIZE bytes go out with some on the spill streams: all
# acknowledged and received, none lost, duplicated or reordered, and the session had its 8 spill streams.
check_spilled_session() {
  local count=$1 size=$2
  start_good_session "$count" "$size" 0 60
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "sender did not get everything acknowledged"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "receiver saw loss, duplication or corruption"; }
  grep '^OK' "$WORK/receiver.out"
  local spilled spill_streams streams
  spilled=$(json_field "$WORK/sender.out" spilled_messages)
  spill_streams=$(json_field "$WORK/sender.out" spill_streams)
  streams=$(json_field "$WORK/sender.out" streams)
  ((spill_streams == 8)) || fail "the session had $spill_streams spill streams, expected 8"
  ((spilled > 0)) || fail "no message of $size bytes was spilled onto the spill streams"
  pass "$count messages of $size bytes, $spilled of them spilled onto $spill_streams spill streams beside $streams: none lost, none duplicated, order kept"
}

# A fresh session's first burst (2000 x 1 KiB, 2 MB: far beyond stream 0's initial window and the
# 250 KB bandwidth-delay product of LONGPIPE_BANDWIDTH x RTT) spills onto the spill streams.
check_spill() { check_spilled_session 2000 1024; }

# A fresh session's large messages (200 x 64 KiB, 13 MB: no frame fits an initial window whole)
# queue on the spill streams during start-up (LONGPIPE_SPILL_LARGE), within the 250 KB budget of
# one bandwidth-delay product: nothing lost, duplicated or reordered.
check_spill_large() { check_spilled_session 200 65536; }

# A dial storm: 16 fresh endpoints (one process here, an engine each: as the 16 ranks of one site
# opening to one rank at start-up) released at one instant, each dialling its 2 streams and 8 spill
# streams to one acceptor, each then sending its numbered messages.
check_dial_storm() {
  local senders=16 count=300 size=1024
  start_in b receiver "$PROBE" receive --listen ":$PORT" --senders $senders --count $count --size $size --timeout-s 40
  wait_for_listen receiver
  start_in a sender "$PROBE" send --peer "site-b:$PORT" --engines $senders --count $count --size $size --timeout-s 40
  wait "$sender_pid" || { cat "$WORK/sender.out" >&2; fail "not every engine of the storm got everything acknowledged"; }
  wait "$receiver_pid" || { cat "$WORK/receiver.out" >&2; fail "the acceptor saw loss, duplication or reordering in the storm"; }
  grep '^OK' "$WORK/receiver.out"
  local refused failures
  refused=$(json_field "$WORK/receiver.out" refused_busy)
  failures=$(grep '^stats ' "$WORK/sender.out" | grep -oE '"connect_failures":[0-9]+' | cut -d: -f2 | awk '{s += $1} END {print s + 0}')
  if ((refused != 0 || failures != 0)); then
    grep -oE '"last_connection_error":"[^"]+"' "$WORK/sender.out" | sort | uniq -c >&2 || true
    fail "the acceptor turned away $refused connections of the storm ($failures connect failures at the diallers; their last errors above)"
  fi
  pass "$senders sessions dialled at one instant (10 connections each): $senders x $count messages, each in order, none lost or duplicated, no connection turned away"
}

case ${1:-} in
  reset) LONGPIPE_STREAMS=1 check_reset ;;
  spill) check_spill ;;
  spill-large) check_spill_large ;;
  # The default silence timers: the storm tests the acceptor's burst, and at the short test
  # timers 160 handshakes slower than 0.46 s (a busy sanitizer build) read as a silent path, on
  # which each dial gets only a few round trips (Session::handle_timeout) and times out.
  dial-storm) LONGPIPE_KEEPALIVE_MS=2000 LONGPIPE_CONNECT_RETRY_MAX_MS=2000 check_dial_storm ;;
  reset-striped) LONGPIPE_STREAMS=3 LONGPIPE_SMALL_MESSAGE=0 check_reset ;;
  wrong-key) check_wrong_key ;;
  garbage) check_garbage ;;
  garbage-authenticated) check_garbage_authenticated ;;
  dead-peer) check_dead_peer ;;
  outage) check_outage ;;
  restart) check_restart ;;
  flood) check_flood ;;
  paused) check_paused ;;
  freeze) check_freeze ;;
  datagram) check_datagram ;;
  *) echo "usage: $0 reset|reset-striped|spill|spill-large|dial-storm|wrong-key|garbage|garbage-authenticated|dead-peer|outage|restart|flood|paused|freeze|datagram" >&2; exit 2 ;;
esac
