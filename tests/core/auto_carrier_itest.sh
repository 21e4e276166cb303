#!/usr/bin/env bash
# LONGPIPE_CARRIER=auto decided by the dialler (carrier_choice.h), across the emulated link (ctest
# fixture auto-link: 110 ms each way, 220 ms round trip: longer than auto's shortest long path for
# a new path, kNewPathMinRtt, 200 ms). Checked through the statistics, never through timing:
#   0. a new short path (site a to a server in site a): decided tcp at CHALLENGE by its round trip;
#      its 8 spill streams come up and its first messages go as 0.5-RTT data (early_messages), as
#      with LONGPIPE_CARRIER=tcp;
#   1. a new long path (fresh cache): decided datagrams at CHALLENGE by its round trip, whatever the
#      first flight (20 x 1 KiB, 20 x 64 KiB), no spill streams, its first datagrams sent as 0.5-RTT
#      data (protocol 5: CHALLENGE carries the acceptor's offer);
#   2. a path the dialler's cache knows (a warm-start entry of this path): datagrams, the auto
#      acceptor following, 0.5-RTT data as in 1;
#   3. the same, the acceptor's UDP port taken (its engine offers TCP only): tcp, all delivered;
#   4. the same, the acceptor set to tcp: tcp, all delivered;
#   5. the acceptor set to udp: a new long path's bulk agrees on udp; a path the cache knows as tcp's
#      (its rate too low to be worth datagrams) fails with the clear error;
#   6. the peer's verdict: the end that only answered saves the auto dialler's choice of datagrams
#      and follows it when it dials back, though its own entry (its replies' rate) says tcp.
set -euo pipefail

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"
need_build_dir
PERF=$BUILD/apps/lp-perf/lp-perf
PYTHON=/usr/bin/python3
PORT=7631
WORK=$(mktemp -d)
trap itest_cleanup EXIT

export LONGPIPE_KEY=auto-carrier-test-key LONGPIPE_PIN=off LONGPIPE_CARRIER=auto
CACHE=$WORK/paths

# serve NAME PORT [VAR=VALUE...]: an lp-perf server in site b (no path cache of its own).
serve() {
  local name=$1 port=$2
  shift 2
  env LONGPIPE_PATH_CACHE=off "$@" "$WAN" exec b "$PERF" serve --port "$port" >"$WORK/$name.out" 2>&1 &
  PIDS+=($!)
  wait_for_server "$name"
}

# show_servers: the servers' output, after a failed run's (a server that stopped would otherwise
# look like a host that refuses: the client only sees "Connection refused").
show_servers() {
  local out
  for out in "$WORK"/*.out; do
    [[ $(basename "$out") == run* ]] && continue
    echo "--- $(basename "$out" .out) (last lines):" >&2
    tail -n 30 "$out" >&2
  done
}

# run_failed N WHY: run N's output and the servers', then the failure.
run_failed() {
  cat "$WORK/run$1.out" >&2
  show_servers
  fail "$2"
}

# run N PORT [SIZE]: one fresh lp-perf run in site a (20 x SIZE, 1K by default, one batch) with the cache $CACHE.
run() {
  local n=$1 port=$2 size=${3:-1K}
  LONGPIPE_PATH_CACHE=$CACHE LONGPIPE_STATS=$WORK/run$n.json "$WAN" exec a "$PERF" run --peer site-b:"$port" \
    --count 20 --size "$size" --batches 1 --pings 1 >"$WORK/run$n.out" 2>&1
}

# field N EXPRESSION: a Python expression over run N's statistics (s = the session).
field() {
  "$PYTHON" - "$WORK/run$1.json" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["sessions"][0]
print(eval(sys.argv[2]))
PY
}

# A server in site a: the short path (run 0), and the peer site b dials back (run 7).
env LONGPIPE_PATH_CACHE=off "$WAN" exec a "$PERF" serve --port $((PORT + 5)) >"$WORK/serve-a.out" 2>&1 &
PIDS+=($!)
wait_for_server serve-a
# By the server's own name (site-a): run 0 is about the carrier on a short path; a peer dialled by
# an alias has its own test (engine_security_test; docs/engine/security.md, "A peer reached by another
# name than its own is one session").
LONGPIPE_PATH_CACHE=$CACHE LONGPIPE_STATS=$WORK/run0.json "$WAN" exec a "$PERF" run --peer site-a:$((PORT + 5)) \
  --count 20 --size 1K --batches 1 --pings 1 >"$WORK/run0.out" 2>&1 || run_failed 0 "run 0 failed"
[[ $(field 0 's["carrier"]') == tcp ]] || fail "run 0: carrier $(field 0 's["carrier"]') on a new short path"
[[ $(field 0 's["spill_streams"]') == 8 ]] || fail "run 0: $(field 0 's["spill_streams"]') spill streams, expected 8"
early=$(field 0 's["early_messages"]')
((early > 0)) || fail "run 0: no 0.5-RTT data (early_messages $early)"
pass "a new short path: tcp decided at CHALLENGE, 8 spill streams, $early messages sent as 0.5-RTT data"
rm -f "$CACHE"

serve auto $PORT
for n in 10 1; do
  size=1K
  ((n == 1)) && size=64K
  rm -f "$CACHE"
  run $n $PORT $size || run_failed $n "run $n failed"
  [[ $(field $n 's["carrier"]') == udp ]] || fail "run $n: carrier $(field $n 's["carrier"]') on a new long path (20 x $size)"
  [[ $(field $n 's["spill_streams"]') == 0 && $(field $n 's["early_messages"]') -gt 0 ]] ||
    fail "run $n: $(field $n 's["spill_streams"]') spill streams, $(field $n 's["early_messages"]') early messages on datagrams (want 0, >0)"
done
pass "a new long path: datagrams decided at CHALLENGE for 20 x 1 KiB and 20 x 64 KiB, sent as 0.5-RTT data"

# A warm-start entry of this path: 220 ms, 50 Mbit/s (1.4 MB, 95 initial windows: carrier_choice.h).
printf '# longpipe path cache 1\n10.77.0.2 %s 220000 6250000 200 4000000 8000000\n' "$(date +%s)" >"$CACHE.known"
cp "$CACHE.known" "$CACHE"
run 2 $PORT || run_failed 2 "run 2 failed"
[[ $(field 2 's["carrier"]') == udp ]] || fail "run 2: carrier $(field 2 's["carrier"]') on a known path"
[[ $(field 2 's["spill_streams"]') == 0 && $(field 2 's["early_messages"]') -gt 0 ]] ||
  fail "run 2: $(field 2 's["spill_streams"]') spill streams, $(field 2 's["early_messages"]') early messages on datagrams (want 0, >0)"
pass "a known long path: the dialler chose datagrams, the auto acceptor followed"

# The acceptor's UDP port taken: its engine offers TCP only; the dialler's datagrams fall back to tcp.
"$WAN" exec b "$PYTHON" -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('0.0.0.0', $((PORT + 1))))
time.sleep(300)" &
PIDS+=($!)
# The server must find its UDP port taken: wait until the holder has bound it.
for _ in $(seq 100); do
  [[ -n $("$WAN" exec b ss -Hlun "sport = :$((PORT + 1))") ]] && break
  sleep 0.05
done
[[ -n $("$WAN" exec b ss -Hlun "sport = :$((PORT + 1))") ]] || fail "run 3: the UDP port holder did not bind port $((PORT + 1)) in 5 s"
serve no-udp $((PORT + 1))
cp "$CACHE.known" "$CACHE"
run 3 $((PORT + 1)) || run_failed 3 "run 3 failed (datagrams chosen, acceptor without UDP)"
[[ $(field 3 's["carrier"]') == tcp ]] || fail "run 3: carrier $(field 3 's["carrier"]')"
pass "datagrams chosen, the acceptor's UDP socket not bound: tcp, everything delivered"

serve tcp $((PORT + 2)) LONGPIPE_CARRIER=tcp
cp "$CACHE.known" "$CACHE"
run 4 $((PORT + 2)) || run_failed 4 "run 4 failed (datagrams chosen, acceptor set to tcp)"
[[ $(field 4 's["carrier"]') == tcp ]] || fail "run 4: carrier $(field 4 's["carrier"]')"
pass "datagrams chosen, the acceptor set to tcp: tcp, everything delivered"

serve udp $((PORT + 3)) LONGPIPE_CARRIER=udp
rm -f "$CACHE"
run 5 $((PORT + 3)) 64K || run_failed 5 "run 5: a new long path's auto dialler and a udp acceptor did not agree"
[[ $(field 5 's["carrier"]') == udp ]] || fail "run 5: carrier $(field 5 's["carrier"]') against a udp acceptor"
# This path known as tcp's: 220 ms at 0.2 MB/s (44 KB: far below the warm start's 32 initial windows).
printf '# longpipe path cache 1\n10.77.0.2 %s 220000 200000 20 4000000 8000000\n' "$(date +%s)" >"$CACHE"
if run 9 $((PORT + 3)); then cat "$WORK/run9.out" >&2; fail "run 9: auto that chose tcp and a udp acceptor agreed"; fi
grep -q "LONGPIPE_CARRIER is auto here, which chose tcp" "$WORK/run9.out" || { cat "$WORK/run9.out" >&2; fail "run 9: not the clear error"; }
pass "an acceptor set to udp: a new long path agrees on udp; a path known as tcp's fails with the clear error"

# The peer's verdict (carrier_choice.h, path_peer_judged_datagrams), as in the CFD demo: the end that
# only answered holds its replies' rate for the path (its own judgement: tcp), but heard the dialler,
# set to auto, choose datagrams; when it dials that site itself, it follows that verdict.
B_CACHE=$WORK/b-paths
serve verdict $((PORT + 4)) LONGPIPE_PATH_CACHE="$B_CACHE"
verdict_server=${PIDS[-1]}
cp "$CACHE.known" "$CACHE"
run 6 $((PORT + 4)) || run_failed 6 "run 6 failed"
[[ $(field 6 's["carrier"]') == udp ]] || fail "run 6: carrier $(field 6 's["carrier"]') on a known path"
kill -TERM "$verdict_server"
wait "$verdict_server" || true  # it saves its path cache as it stops
read -r _ _ _ b_rate _ _ _ _ b_verdict < <(grep '^10\.77\.0\.1 ' "$B_CACHE" 2>/dev/null) || { cat "$WORK/verdict.out" >&2; fail "run 6: site b saved no entry for site a"; }
[[ $b_verdict == 1 ]] || { cat "$B_CACHE" >&2; fail "run 6: site b saved the verdict '$b_verdict', expected 1"; }

# dial_from_b N PORT: one fresh lp-perf run in site b against a server in site a, with site b's cache.
dial_from_b() {
  LONGPIPE_PATH_CACHE=$B_CACHE LONGPIPE_STATS=$WORK/run$1.json "$WAN" exec b "$PERF" run --peer site-a:"$2" \
    --count 20 --size 1K --batches 1 --pings 1 >"$WORK/run$1.out" 2>&1 || run_failed $1 "run $1 failed"
}
dial_from_b 7 $((PORT + 5))
[[ $(field 7 's["carrier"]') == udp ]] || fail "run 7: carrier $(field 7 's["carrier"]'): site b did not heed site a's verdict"
# The control: the same entry with the verdict "tcp" (its own judgement alone) dials tcp.
sed -i 's/^\(10\.77\.0\.1 .*\) 1$/\1 0/' "$B_CACHE"
dial_from_b 8 $((PORT + 5))
[[ $(field 8 's["carrier"]') == tcp && $(field 8 's["spill_streams"]') == 8 ]] ||
  fail "run 8: carrier $(field 8 's["carrier"]'), $(field 8 's["spill_streams"]') spill streams with the verdict tcp"
pass "the answering end's entry (rate $b_rate B/s) kept the dialler's verdict; dialling back it chose datagrams (tcp when the verdict is tcp)"
