# shellcheck shell=bash
# sites_lib.sh: lp-perf servers and clients and numbered CONNECT streams between the private hosts of
# the emulated sites, for run_sites.sh and run_routes.sh (which set WAN, WORK, PIDS, PERF, PERF_PORT,
# ECHO_PORT, RUN_SECONDS, PERF_COUNT, PERF_BATCHES, PERF_PINGS, STREAM_LINES and LONGPIPE_GATEWAY, and
# source ../lib/itest_common.sh first).

# in_site HOST CMD... &: CMD in HOST in the background, in a process group of its own whose leader
# is $! (the subshell execs setsid, which execs netem/wan), so that the clean-up ends it with
# everything it started (timeout's child too). Only for `&`: it replaces the shell that runs it.
in_site() { exec setsid "$WAN" exec "$@"; }

# perf_server NAME HOST: lp-perf serve in HOST (through its gateway), output in NAME.out.
perf_server() {
  in_site "$2" timeout "$RUN_SECONDS" "$PERF" serve --port "$PERF_PORT" </dev/null >"$WORK/$1.out" 2>&1 &
  PIDS+=($!)
  echo $! >"$WORK/$1.pid"
  wait_for_server "$1"
}

# perf_client NAME HOST PEER: lp-perf run from HOST to PEER (site/host:port), in the background.
perf_client() {
  in_site "$2" timeout "$RUN_SECONDS" "$PERF" run --peer "$3" --count $PERF_COUNT --batches $PERF_BATCHES \
    --pings $PERF_PINGS --json "$WORK/$1.json" </dev/null >"$WORK/$1.out" 2>&1 &
  PIDS+=($!)
  echo $! >"$WORK/$1.pid"
}

# finish_client NAME PEER: the client ended well, and its session to PEER shows every message sent once.
finish_client() {
  local status=0
  wait "$(cat "$WORK/$1.pid")" || status=$?
  ((status == 0)) || { tail -n 20 "$WORK/$1.out" >&2; fail "lp-perf run $1 exited with status $status"; }
  /usr/bin/python3 - "$WORK/$1.json" "$2" <<'PY' || fail "$1: its session does not show every message delivered once"
import json, sys
summary, peer = json.load(open(sys.argv[1])), sys.argv[2]
sessions = [s for s in summary["engine"]["sessions"] if s["peer"] == peer]
assert sessions, f"no session to {peer}: {[s['peer'] for s in summary['engine']['sessions']]}"
s = sessions[0]
# lp-perf run waited for an acknowledgement of every message (else it fails); its engine's counters
# are a snapshot at exit (acknowledgements of the engine's own may still be in flight).
assert s["messages_sent"] > 0 and s["duplicates_dropped"] == 0, s
print(f"== {peer}: {s['messages_sent']} sent", file=sys.stderr)
PY
}

# stop_server NAME EXPECTED: SIGTERM (lp-perf serve then prints its count), which must be EXPECTED.
# The PID is timeout's (setsid and netem/wan exec exec into it), which passes the signal on.
stop_server() {
  local pid received
  pid=$(cat "$WORK/$1.pid")
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  received=$(sed -n 's/^lp-perf: \([0-9]*\) messages received.*/\1/p' "$WORK/$1.out")
  [[ $received == "$2" ]] || fail "$1: the server received '${received}' messages, not $2: $(tail -n 3 "$WORK/$1.out" | cut -c1-300)"
  say "$1: $received messages received, as sent"
}

# Messages one client sends: a cold batch, PERF_BATCHES warm ones, PERF_PINGS pings.
client_messages() { echo $((PERF_COUNT * (PERF_BATCHES + 1) + PERF_PINGS)); }

# perf_pair SERVER-HOST CLIENT-HOST PEER: one lp-perf server and client, every message once.
perf_pair() {
  perf_server "srv-$1" "$1"
  perf_client "cli-$2" "$2" "$3"
  finish_client "cli-$2" "$3"
  stop_server "srv-$1" "$(client_messages)"
}

# numbered_stream FROM SITE TO [HOLD]: STREAM_LINES numbered lines from FROM through CONNECT to an
# echo server on TO (site S<SITE>), back whole and in order; with HOLD the client keeps the stream
# open HOLD seconds after the last line came back before it shuts down its side. Fails (status) when
# the stream does not come back whole and in order.
numbered_stream() {
  local from=$1 site=$2 to=$3 hold=${4:-0} address
  address=$("$WAN" exec "$to" hostname -I | awk '{print $1}')
  in_site "$to" timeout "$RUN_SECONDS" /usr/bin/python3 -c '
import socket, sys
server = socket.create_server(("0.0.0.0", int(sys.argv[1])))
print("listening", flush=True)
connection, _ = server.accept()
while data := connection.recv(65536):
    connection.sendall(data)
connection.close()' "$ECHO_PORT" >"$WORK/echo-$to.out" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 50); do grep -q listening "$WORK/echo-$to.out" && break; sleep 0.1; done
  "$WAN" exec "$from" timeout "$RUN_SECONDS" /usr/bin/python3 - "$LONGPIPE_GATEWAY" "S$site/$address:$ECHO_PORT" "$STREAM_LINES" "$hold" <<'PY'
import socket, sys, threading, time
path, target, count, hold = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
s.sendall(f"LONGPIPE-GATEWAY/1 CONNECT {target}\n".encode())
reader = s.makefile("rb")
answer = reader.readline().decode().strip()
if answer != "OK":
    sys.exit(f"CONNECT {target}: {answer}")
echoed = threading.Event()
def send():
    for n in range(count):
        s.sendall(f"{n} {'x' * (n % 900)}\n".encode())
    echoed.wait(30)
    time.sleep(hold)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=send, daemon=True).start()
expected = 0
for line in reader:
    number, _, payload = line.decode().rstrip("\n").partition(" ")
    if int(number) != expected or payload != "x" * (expected % 900):
        sys.exit(f"WRONG: line {expected} expected, got {line[:40]!r}")
    expected += 1
    if expected == count:
        print("echoed", flush=True)
        echoed.set()
if expected != count:
    sys.exit(f"WRONG: {expected} of {count} lines came back")
print(f"== numbered stream {target}: {count} lines back in order", file=sys.stderr)
PY
}
