#!/usr/bin/env bash
# TCP Fast Open across the emulated link (ctest fixture fast-open-link: 25 ms each way; netem/wan
# sets net.ipv4.tcp_fastopen=3 in both sites). Checked through the statistics, never through timing:
#   1. a first pair of fresh processes (receiver in site b, sender in site a) delivers everything;
#      its dials ask site b's kernel for a cookie (site a's kernel caches it);
#   2. a second fresh pair: every connection's SYN carries HELLO and site b's kernel takes it
#      (fast_open.syn_data = fast_open.accepted >= 1, at both ends), everything in order, nothing
#      lost; the handshake RTT is one round trip (~50 ms), not two and not the zero of a deferred connect;
#   3. LONGPIPE_FAST_OPEN=off at the sender: no SYN carries data;
#   4. LONGPIPE_FAST_OPEN=off at the receiver (its listener without TCP_FASTOPEN), the sender's cookie
#      still cached: the SYNs carry data that site b's kernel does not take (syn_data >= 1, accepted
#      0); its kernel sends HELLO again after the handshake, everything arrives, and the handshake RTT
#      is still one round trip (the kernel's SYN sample, not HELLO -> CHALLENGE's two).
set -euo pipefail

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"
need_build_dir
PROBE=$BUILD/tests/core/lp-engine-probe
PYTHON=/usr/bin/python3
PORT=7621
COUNT=400
WORK=$(mktemp -d)
trap itest_cleanup EXIT

export LONGPIPE_KEY=fast-open-test-key LONGPIPE_PIN=off LONGPIPE_PATH_CACHE=off

[[ $("$WAN" exec b sysctl -n net.ipv4.tcp_fastopen) == 3 ]] || fail "site b's net.ipv4.tcp_fastopen is not 3"

# pair N [receiver env] [sender env]: a fresh receiver in site b and a fresh sender in site a,
# COUNT numbered 1 KiB messages checked by the receiver; outputs $WORK/receiverN.out, senderN.out.
pair() {
  local n=$1 receiver_env=${2:-LONGPIPE_FAST_OPEN=on} sender_env=${3:-LONGPIPE_FAST_OPEN=on}
  env "$receiver_env" "$WAN" exec b "$PROBE" receive --listen ":$PORT" --count $COUNT --size 1024 --timeout-s 60 \
    >"$WORK/receiver$n.out" 2>&1 &
  local receiver=$!
  PIDS+=("$receiver")
  for _ in $(seq 1 100); do
    grep -q '^listening' "$WORK/receiver$n.out" 2>/dev/null && break
    sleep 0.1
  done
  env "$sender_env" "$WAN" exec a "$PROBE" send --peer "site-b:$PORT" --count $COUNT --size 1024 --timeout-s 60 \
    >"$WORK/sender$n.out" 2>&1 || { cat "$WORK/sender$n.out" >&2; fail "pair $n: the sender did not get everything acknowledged"; }
  wait "$receiver" || { cat "$WORK/receiver$n.out" >&2; fail "pair $n: the receiver saw loss, duplication or reordering"; }
}

# field N END EXPRESSION: a Python expression over the statistics of pair N's END (receiver or
# sender; the receiver's taken while its session was up); s = its session.
field() {
  local line=stats
  [[ $2 == receiver ]] && line=session_stats
  grep "^$line " "$WORK/$2$1.out" | tail -n 1 | cut -d' ' -f2- |
    "$PYTHON" -c 'import json, sys; s = json.load(sys.stdin)["sessions"][0]; print(eval(sys.argv[1]))' "$3"
}

# one_round_trip N: the sender's handshake RTT is one round trip of the 50 ms path.
one_round_trip() {
  local rtt
  rtt=$(field "$1" sender 's["path"]["handshake_rtt_ms"]')
  "$PYTHON" -c "import sys; sys.exit(0 if 45 <= $rtt < 90 else 1)" || fail "pair $1: handshake RTT $rtt ms for a 50 ms path"
  echo "$rtt"
}

pair 1
pass "pair 1: $COUNT messages in order (SYN data $(field 1 sender 's["fast_open"]["syn_data"]'): the cookie was requested)"

pair 2
syn_data=$(field 2 sender 's["fast_open"]["syn_data"]')
accepted=$(field 2 sender 's["fast_open"]["accepted"]')
taken=$(field 2 receiver 's["fast_open"]["accepted"]')
((syn_data >= 1 && accepted == syn_data)) || fail "pair 2: sender fast_open syn_data $syn_data, accepted $accepted"
((taken >= 1)) || fail "pair 2: the receiver took no SYN data ($taken)"
rtt=$(one_round_trip 2)
pass "pair 2: $syn_data connections sent HELLO in the SYN, all taken ($taken at the receiver), $COUNT messages in order, handshake RTT $rtt ms"

pair 3 LONGPIPE_FAST_OPEN=on LONGPIPE_FAST_OPEN=off
[[ $(field 3 sender 's["fast_open"]["syn_data"]') == 0 && $(field 3 receiver 's["fast_open"]["accepted"]') == 0 ]] ||
  fail "pair 3: SYN data with LONGPIPE_FAST_OPEN=off at the sender"
pass "pair 3: LONGPIPE_FAST_OPEN=off at the sender: no SYN data, $COUNT messages in order"

pair 4 LONGPIPE_FAST_OPEN=off LONGPIPE_FAST_OPEN=on
syn_data=$(field 4 sender 's["fast_open"]["syn_data"]')
((syn_data >= 1)) || fail "pair 4: the cached cookie sent no SYN data ($syn_data)"
[[ $(field 4 sender 's["fast_open"]["accepted"]') == 0 && $(field 4 receiver 's["fast_open"]["accepted"]') == 0 ]] ||
  fail "pair 4: SYN data taken by a listener without TCP_FASTOPEN"
rtt=$(one_round_trip 4)
pass "pair 4: LONGPIPE_FAST_OPEN=off at the receiver: $syn_data SYNs with data not taken, $COUNT messages in order, handshake RTT $rtt ms"
