#!/usr/bin/env bash
# run_gateway.sh SCENARIO [ARGS...]: jobs through the site gateways (daemon/longpiped) of the ctest
# fixture (netem/gateways up on the link of LP_WAN_INSTANCE; every process of a site sets
# LONGPIPE_GATEWAY=/etc/longpipe-site/gateway.sock, which names its own site's gateway).
#
#   through CMD [ARGS...]  runs another test script (tests/mpi/transcripts.sh two-site c,
#                 run_collectives.sh two-site four-ranks, tests/pvm/run_comparison.sh two-site ...)
#                 with LONGPIPE_GATEWAY exported: its own checks (transcripts equal to Open MPI or
#                 PVM alone, LongPipe carried the messages) must pass, and both gateways' STATUS
#                 must show the job's bytes forwarded
#   restart       a numbered stream (numbered_stream.c, rank 0 on site-a, rank 1 on site-b, each
#                 message echoed) while gateway A and then gateway B restart under it: the program
#                 sees nothing lost, duplicated or reordered; rank 0's session to rank 1 went
#                 through the gateways (its peer endpoint is "B/...") and was re-dialled
#   outage [SECONDS]  the same stream while the link between the gateways drops every packet for
#                 SECONDS (default 10; a tc ingress filter in both sites, tests/core/outage_drop.bpf.c),
#                 more than three times the ranks' dead-peer timeout (set to 3 s for the stream):
#                 the stream completes, nothing lost, duplicated or reordered, no gateway restarted
#   no-gateway    (no link needed) LONGPIPE_GATEWAY naming a socket that does not exist, or one
#                 nobody listens on: an MPI job and lp-perf fail at start within a bounded time,
#                 with an error naming LONGPIPE_GATEWAY
#   two-jobs      two numbered streams at once through the same gateways (each MPI job makes its
#                 own key): both deliver; and an lp-perf client with another key than its server's
#                 is refused through the gateways, while one with the server's key is answered
#   slow-destination  a destination that stops reading (slow_reader.c: rank 1 on site-b reads
#                 nothing until told) beside a numbered stream through the same gateways: the
#                 numbered stream completes, in order both ways, while the slow one's data waits
#                 unread; told to read, the slow destination receives it all, in order
#   status        netem/gateways status: text and --json name both gateways' sites; ask answers
#                 an unknown request with ERR
#
# Environment: LONGPIPE_LIBRARY (liblongpipe.so), GATEWAY_NUMBERED_STREAM (numbered_stream),
# GATEWAY_SLOW_READER (slow_reader), LP_PERF (lp-perf), LP_GATEWAYS (netem/gateways),
# LONGPIPE_GATEWAY (the sites' socket path).
set -euo pipefail

SCENARIO=${1:?usage: run_gateway.sh through|restart|outage|no-gateway|two-jobs|slow-destination|status [ARGS...]}
shift
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LIBRARY=${LONGPIPE_LIBRARY:?LONGPIPE_LIBRARY must name liblongpipe.so}
GATEWAYS=${LP_GATEWAYS:-$ROOT/netem/gateways}
MPI_SITES=$ROOT/apps/mpi-sites/mpi-sites
# How long one job may take before it counts as hung.
readonly RUN_SECONDS=240
# How long a process whose gateway is missing may take to fail (its engine asks for 2 s at most).
readonly MISSING_GATEWAY_SECONDS=30
# The restart scenario's stream: messages, pause after each round trip (ms), and the points
# (messages received by rank 1) at which gateway A, then gateway B, restart.
readonly STREAM_COUNT=300 STREAM_PAUSE_MS=10 RESTART_A_AT=80 RESTART_B_AT=180
readonly PERF_PORT=7447
# How long a client with another job key than its server's may take to be refused (a few handshakes).
readonly WRONG_KEY_SECONDS=20
# The slow destination's messages and their size, and its job's engine window: 50 MiB, more than
# its MPI front end (64 messages unclaimed), its engine (the window) and the path between can hold,
# so that its backlog reaches back through the gateways and holds its sender.
readonly SLOW_COUNT=200 SLOW_SIZE=262144 SLOW_WINDOW_BYTES=4194304 SLOW_MAX_MESSAGE=1048576
# The outage scenario: its default length, the point of the stream at which it begins, and the
# ranks' engine timers during it: the outage outlasts their dead-peer timeout more than three times
# (their sessions, through the gateways, must not take the silence for a dead peer) and the
# gateways' redial back-off ceiling (LONGPIPE_CONNECT_RETRY_MAX_MS, 2 s) five times.
readonly OUTAGE_SECONDS=10 OUTAGE_AT=80
readonly OUTAGE_RANK_KEEPALIVE_MS=300 OUTAGE_RANK_DEAD_PEER_MS=3000

# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"
# shellcheck source=../lib/link_outage.sh
source "$HERE/../lib/link_outage.sh"

unset LD_PRELOAD
WORK=$(mktemp -d /tmp/lp-gateway-test.XXXXXX)
OUTAGE_ON=""
cleanup() {
  local status=$?
  [[ -z $OUTAGE_ON ]] || outage_end
  itest_cleanup_pids
  remove_work_unless_failed "$status"
  exit "$status"
}
itest_cleanup_pids() {
  local pid
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# gateway_bytes SITE(a|b): the bytes the gateway has forwarded to and from the other site, from its
# STATUS json (the relay's per-peer counters, not its engine's, which count keep-alives too).
gateway_bytes() {
  "$GATEWAYS" ask "$1" STATUS json | /usr/bin/python3 -c '
import json, sys
status = json.load(sys.stdin)
try:
    print(sum(p["bytes_sent"] + p["bytes_received"] for p in status["peers"]))
except (KeyError, TypeError) as error:
    sys.exit(f"STATUS json lacks peers[].bytes_sent/bytes_received ({error}): {status}")'
}

# require_forwarded BEFORE_A BEFORE_B WHAT: both gateways forwarded bytes since BEFORE_*.
require_forwarded() {
  local after_a after_b
  after_a=$(gateway_bytes a) || fail "gateway A did not answer STATUS json"
  after_b=$(gateway_bytes b) || fail "gateway B did not answer STATUS json"
  say "gateway bytes: A $1 -> $after_a, B $2 -> $after_b"
  ((after_a > $1)) || fail "$3: gateway A forwarded nothing (STATUS: $("$GATEWAYS" ask a STATUS json))"
  ((after_b > $2)) || fail "$3: gateway B forwarded nothing (STATUS: $("$GATEWAYS" ask b STATUS json))"
}

# stream_job NAME [PROGRESS_FILE]: numbered_stream across the sites through the gateways, in the
# background (PID in PIDS and NAME.pid); output in NAME.out / NAME.err, statistics NAME.stats.R.json.
stream_job() {
  local name=$1 progress=${2:-}
  local program=${GATEWAY_NUMBERED_STREAM:?GATEWAY_NUMBERED_STREAM must name numbered_stream}
  LONGPIPE_STATS=$WORK/$name.stats.%r.json "$MPI_SITES" -n 1 --timeout "$RUN_SECONDS" --preload "$LIBRARY" \
    --mca mpi_yield_when_idle 1 -- "$program" "$STREAM_COUNT" "$STREAM_PAUSE_MS" ${progress:+"$progress"} \
    </dev/null >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PIDS+=($!)
  echo $! >"$WORK/$name.pid"
}

# finish_stream NAME: waits for the job; it must have ended well with its whole stream.
finish_stream() {
  local name=$1 status=0
  wait "$(cat "$WORK/$name.pid")" || status=$?
  ((status == 0)) || { tail -n 30 "$WORK/$name.err" >&2; cat "$WORK/$name.out" >&2; fail "$name exited with status $status"; }
  grep -qx "stream: $STREAM_COUNT messages in order both ways" "$WORK/$name.out" ||
    fail "$name: the stream did not complete: $(cat "$WORK/$name.out")"
}

# require_gateway_session NAME MIN_RECONNECTS: rank 0's session to rank 1 names rank 1 through
# gateway B ("B/host:port") and was re-dialled at least MIN_RECONNECTS times.
require_gateway_session() {
  /usr/bin/python3 - "$WORK/$1.stats.0.json" "$2" <<'PY' || fail "$1: rank 0's statistics do not show a session through the gateways"
import json, sys
path, minimum = sys.argv[1], int(sys.argv[2])
sessions = json.load(open(path))["sessions"]
through = [s for s in sessions if s["peer"].startswith("B/")]
print(f"== rank 0 sessions: {[(s['peer'], s['messages_sent'], s['reconnects']) for s in sessions]}", file=sys.stderr)
if not through:
    sys.exit(f"no session to a 'B/...' endpoint in {path}")
if max(s["messages_sent"] for s in through) < 1:
    sys.exit("the session through gateway B carried no message")
if max(s["reconnects"] + s["carrier_resets"] for s in through) < minimum:
    sys.exit(f"the session through gateway B was not re-dialled ({minimum} expected)")
PY
}

# progress_at_least FILE N SECONDS: waits until rank 1 has received N messages.
progress_at_least() {
  local deadline=$((SECONDS + $3)) value
  while ((SECONDS < deadline)); do
    value=$(cat "$1" 2>/dev/null || echo 0)
    ((value >= $2)) && return 0
    sleep 0.05
  done
  fail "the stream did not reach $2 messages within $3 s (at $(cat "$1" 2>/dev/null || echo 0))"
}

# --- scenarios --------------------------------------------------------------------------------

scenario_through() {
  (($#)) || fail "through needs a command"
  : "${LONGPIPE_GATEWAY:?through runs with LONGPIPE_GATEWAY set (the ctest fixture sets it)}"
  local before_a before_b
  before_a=$(gateway_bytes a) || fail "gateway A did not answer STATUS json"
  before_b=$(gateway_bytes b) || fail "gateway B did not answer STATUS json"
  export LONGPIPE_GATEWAY
  say "through the gateways: $*"
  "$@" || fail "$* failed through the gateways"
  require_forwarded "$before_a" "$before_b" "$*"
}

scenario_restart() {
  : "${LONGPIPE_GATEWAY:?restart runs with LONGPIPE_GATEWAY set}"
  local before_a before_b
  before_a=$(gateway_bytes a) && before_b=$(gateway_bytes b) || fail "the gateways do not answer STATUS json"
  export LONGPIPE_GATEWAY
  stream_job stream "$WORK/progress"
  progress_at_least "$WORK/progress" "$RESTART_A_AT" 120
  say "restarting gateway A at $(cat "$WORK/progress") messages"
  "$GATEWAYS" restart a || fail "gateway A did not come back"
  # The restarted gateway starts its counters from zero.
  before_a=0
  progress_at_least "$WORK/progress" "$RESTART_B_AT" 120
  say "restarting gateway B at $(cat "$WORK/progress") messages"
  "$GATEWAYS" restart b || fail "gateway B did not come back"
  before_b=0
  local at
  at=$(cat "$WORK/progress")
  ((at < STREAM_COUNT)) || fail "the stream ended before gateway B restarted: not a restart mid-stream"
  finish_stream stream
  require_gateway_session stream 1
  require_forwarded "$before_a" "$before_b" "the stream after the restarts"
  pass "restart: $STREAM_COUNT messages in order both ways across two gateway restarts"
}


scenario_outage() {
  local seconds=${1:-$OUTAGE_SECONDS}
  : "${LONGPIPE_GATEWAY:?outage runs with LONGPIPE_GATEWAY set}"
  local instance_a instance_b
  instance_a=$("$GATEWAYS" ask a STATUS json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["instance"])') ||
    fail "gateway A did not answer STATUS json"
  instance_b=$("$GATEWAYS" ask b STATUS json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["instance"])')
  ((seconds * 1000 > 3 * OUTAGE_RANK_DEAD_PEER_MS)) ||
    fail "the outage ($seconds s) must outlast the ranks' dead-peer timeout ($OUTAGE_RANK_DEAD_PEER_MS ms) three times"
  outage_filter
  export LONGPIPE_GATEWAY LONGPIPE_KEEPALIVE_MS=$OUTAGE_RANK_KEEPALIVE_MS LONGPIPE_DEAD_PEER_MS=$OUTAGE_RANK_DEAD_PEER_MS
  stream_job stream "$WORK/progress"
  progress_at_least "$WORK/progress" "$OUTAGE_AT" 120
  outage_begin
  # A message or two may have been past the filters already.
  sleep 1
  local from to
  from=$(cat "$WORK/progress")
  say "link outage of $seconds s at $from messages"
  sleep "$((seconds - 1))"
  to=$(cat "$WORK/progress")
  outage_end
  say "link back at $to messages"
  ((to == from)) || fail "the stream went on during the outage ($from -> $to messages): the link was not cut"
  ((to < STREAM_COUNT)) || fail "the stream ended before the outage: it did not happen mid-stream"
  finish_stream stream
  require_gateway_session stream 0
  [[ $("$GATEWAYS" ask a STATUS json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["instance"])') == "$instance_a" ]] ||
    fail "gateway A restarted during the outage"
  [[ $("$GATEWAYS" ask b STATUS json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["instance"])') == "$instance_b" ]] ||
    fail "gateway B restarted during the outage"
  pass "outage: $STREAM_COUNT messages in order both ways across a $seconds s outage between the gateways"
}

# expect_gateway_error WHAT SECONDS-TAKEN STATUS OUTPUT
expect_gateway_error() {
  local what=$1 took=$2 status=$3 output=$4
  ((status != 0)) || fail "$what succeeded without its gateway: $output"
  ((status != 124 && status != 137)) || fail "$what hung without its gateway (ended by the $MISSING_GATEWAY_SECONDS s guard)"
  grep -q LONGPIPE_GATEWAY <<<"$output" || fail "$what: the error does not name LONGPIPE_GATEWAY: $output"
  say "$what failed after ${took} s: $(grep -m1 LONGPIPE_GATEWAY <<<"$output")"
}

scenario_no_gateway() {
  local program=${GATEWAY_NUMBERED_STREAM:?GATEWAY_NUMBERED_STREAM must name numbered_stream}
  local perf=${LP_PERF:?LP_PERF must name lp-perf}
  # A socket file nobody listens on (its listener closed without removing it).
  local stale=$WORK/stale.sock
  /usr/bin/python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' "$stale"
  [[ -S $stale ]] || fail "could not make a stale socket file"
  local gateway status started output
  for gateway in "$WORK/no-such-dir/gateway.sock" "$stale"; do
    # An MPI job on this host with two forced sites: its engine starts at MPI_Init.
    status=0 started=$SECONDS
    output=$(timeout -s KILL "$MISSING_GATEWAY_SECONDS" mpirun --allow-run-as-root --oversubscribe --bind-to none \
      --mca btl tcp,self -np 2 -x LONGPIPE_MPI_SITES=0,1 -x LONGPIPE_GATEWAY="$gateway" -x LD_PRELOAD="$LIBRARY" \
      "$program" 10 0 </dev/null 2>&1) || status=$?
    expect_gateway_error "an MPI job (LONGPIPE_GATEWAY=$gateway)" $((SECONDS - started)) "$status" "$output"
    # The engine alone (lp-perf serve would otherwise run until stopped).
    status=0 started=$SECONDS
    output=$(LONGPIPE_KEY=$(openssl rand -hex 32) LONGPIPE_GATEWAY=$gateway \
      timeout -s KILL "$MISSING_GATEWAY_SECONDS" "$perf" serve --port $PERF_PORT </dev/null 2>&1) || status=$?
    expect_gateway_error "lp-perf serve (LONGPIPE_GATEWAY=$gateway)" $((SECONDS - started)) "$status" "$output"
  done
  pass "no-gateway: clear errors naming LONGPIPE_GATEWAY, no hang"
}

scenario_two_jobs() {
  : "${LONGPIPE_GATEWAY:?two-jobs runs with LONGPIPE_GATEWAY set}"
  local perf=${LP_PERF:?LP_PERF must name lp-perf}
  local before_a before_b
  before_a=$(gateway_bytes a) && before_b=$(gateway_bytes b) || fail "the gateways do not answer STATUS json"
  export LONGPIPE_GATEWAY
  stream_job first "$WORK/first.progress"
  stream_job second "$WORK/second.progress"
  finish_stream first
  finish_stream second
  require_gateway_session first 0
  require_gateway_session second 0
  require_forwarded "$before_a" "$before_b" "two jobs"

  # A process with another job's key is refused through the shared gateways.
  local key=$WORK/job.key other=$WORK/other.key
  (umask 077 && openssl rand -hex 32 >"$key" && openssl rand -hex 32 >"$other")
  LONGPIPE_KEY_FILE=$key "$WAN" exec b timeout "$RUN_SECONDS" "$perf" serve --port $PERF_PORT \
    </dev/null >"$WORK/serve.out" 2>&1 &
  PIDS+=($!)
  sleep 1
  # Refused at once (a few handshakes), not after LONGPIPE_DEAD_PEER_MS (60 s here: a refusal that
  # were only a host refusing would run into the guard) with a message that says why.
  local status=0 output started=$SECONDS
  output=$(LONGPIPE_KEY_FILE=$other LONGPIPE_DEAD_PEER_MS=60000 "$WAN" exec a timeout -s KILL "$WRONG_KEY_SECONDS" \
    "$perf" run --peer "B/10.77.0.2:$PERF_PORT" --count 5 --batches 1 --pings 1 2>&1) || status=$?
  ((status != 0)) || fail "a client with another key was answered through the gateways: $output"
  ((status != 137)) || fail "a client with another key was not refused within $WRONG_KEY_SECONDS s: $output"
  grep -q 'the peer refused our handshake' <<<"$output" && grep -q 'LONGPIPE_KEY' <<<"$output" ||
    fail "the refusal of a client with another key does not say why: $output"
  say "another key: refused after $((SECONDS - started)) s ($(grep -m1 'refused our handshake' <<<"$output"))"
  output=$(LONGPIPE_KEY_FILE=$key "$WAN" exec a timeout 60 "$perf" run --peer "B/10.77.0.2:$PERF_PORT" \
    --count 5 --batches 1 --pings 1 2>&1) || fail "a client with the server's key failed through the gateways: $output"
  pass "two-jobs: both streams delivered; another key refused, the right key answered"
}

scenario_slow_destination() {
  : "${LONGPIPE_GATEWAY:?slow-destination runs with LONGPIPE_GATEWAY set}"
  local program=${GATEWAY_SLOW_READER:?GATEWAY_SLOW_READER must name slow_reader}
  export LONGPIPE_GATEWAY
  LONGPIPE_WINDOW_BYTES=$SLOW_WINDOW_BYTES LONGPIPE_MAX_MESSAGE=$SLOW_MAX_MESSAGE \
    "$MPI_SITES" -n 1 --timeout "$RUN_SECONDS" --preload "$LIBRARY" --mca mpi_yield_when_idle 1 -- \
    "$program" "$SLOW_COUNT" "$SLOW_SIZE" "$WORK/go" "$WORK/sent" </dev/null >"$WORK/slow.out" 2>"$WORK/slow.err" &
  local slow=$!
  PIDS+=("$slow")
  # The slow job's first message is on its way before the fast one starts.
  local deadline=$((SECONDS + 60))
  until [[ -s $WORK/sent ]]; do
    kill -0 "$slow" 2>/dev/null || { tail -n 20 "$WORK/slow.err" >&2; fail "the slow job ended before sending"; }
    ((SECONDS < deadline)) || fail "the slow job sent nothing within 60 s"
    sleep 0.05
  done
  stream_job fast "$WORK/fast.progress"
  finish_stream fast
  local sent
  sent=$(cat "$WORK/sent")
  kill -0 "$slow" 2>/dev/null || fail "the slow job ended while its destination read nothing: $(cat "$WORK/slow.out")"
  ! grep -q '^slow:' "$WORK/slow.out" || fail "the slow destination received before it was told to read"
  ((sent < SLOW_COUNT)) || fail "the slow job's sender sent all $SLOW_COUNT: its destination's backlog did not reach back to it"
  say "fast stream complete while the slow destination has read none of its messages (its sender held at $sent of $SLOW_COUNT)"
  say "site b, TCP receive queues: $("$WAN" exec b ss -Htn | awk '$2 > 0 {printf "%s ", $2}')"
  touch "$WORK/go"
  local status=0
  wait "$slow" || status=$?
  ((status == 0)) || { tail -n 30 "$WORK/slow.err" >&2; fail "the slow job exited with status $status: $(cat "$WORK/slow.out")"; }
  grep -qx "slow: $SLOW_COUNT messages in order" "$WORK/slow.out" ||
    fail "the slow destination did not receive its messages in order: $(cat "$WORK/slow.out")"
  pass "slow-destination: $STREAM_COUNT messages in order both ways beside a destination that read nothing, then its $SLOW_COUNT in order"
}

scenario_status() {
  local text json
  text=$("$GATEWAYS" status) || fail "netem/gateways status failed: $text"
  grep -q '^gateway A:' <<<"$text" && grep -q '^gateway B:' <<<"$text" || fail "status text lacks a gateway: $text"
  json=$("$GATEWAYS" status --json) || fail "netem/gateways status --json failed: $json"
  /usr/bin/python3 -c 'import json, sys; s = json.loads(sys.argv[1]); sys.exit(0 if set(s) == {"A", "B"} and all(isinstance(v, dict) and "error" not in v for v in s.values()) else 1)' "$json" ||
    fail "status --json is not {A: {...}, B: {...}}: $json"
  local answer
  answer=$("$GATEWAYS" ask a NONSENSE) || true
  [[ $answer == ERR* ]] || fail "an unknown request was not answered with ERR: '$answer'"
  answer=$("$GATEWAYS" ask b SITE) || true
  [[ $answer == "OK B" ]] || fail "gateway B answered SITE with '$answer'"
  pass "status: text and --json for both gateways"
}

case $SCENARIO in
  through) scenario_through "$@" ;;
  restart) scenario_restart ;;
  outage) scenario_outage "$@" ;;
  no-gateway) scenario_no_gateway ;;
  two-jobs) scenario_two_jobs ;;
  slow-destination) scenario_slow_destination ;;
  status) scenario_status ;;
  *) fail "unknown scenario '$SCENARIO'" ;;
esac
