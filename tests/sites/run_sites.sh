#!/usr/bin/env bash
# run_sites.sh SCENARIO: three sites whose compute hosts are private, joined only through one site
# gateway each (netem/wan up --sites ... --hosts 2, firewall on; netem/gateways up on it). Every
# process sets LONGPIPE_GATEWAY=/etc/longpipe-site/gateway.sock, which names its own site's gateway.
#
#   site-path   in every gateway host and compute host of every site the site path is a socket
#               whose gateway answers SITE with that site's name (S1, S2, S3)
#   exchange    engine messages between private compute hosts of all three sites through the
#               gateways: lp-perf serve on s2-h1 and on s3-h1, lp-perf run from s1-h1 and s3-h2 to
#               s2-h1 and from s1-h2 to s3-h1 (acknowledgement of each message; each server counts
#               exactly the messages its clients sent: nothing lost or duplicated); and a numbered byte
#               stream through CONNECT from s1-h1 to an echo server on s3-h2, echoed back in order
#   one-port    the exchange again under counters in the core router's forward hook (nftables):
#               every packet between sites is gateway to gateway (172.31.0.x <-> 172.31.0.y) on
#               the open port, none comes from or goes to a site LAN (10.0.0.0/8), and every pair
#               of sites the exchange uses carried packets both ways; every check of exchange holds
#               too (ctest runs one-port, not exchange, which is the same run without the counters)
#   no-direct   a compute host dialling another site's compute host or gateway directly fails with
#               "Network is unreachable" (while a server listens there), and lp-perf without
#               LONGPIPE_GATEWAY cannot reach another site: the gateways are the only path
#
# Environment: LP_PERF (lp-perf), LP_GATEWAYS (netem/gateways), LONGPIPE_GATEWAY, LP_WAN_INSTANCE,
# LONGPIPE_WAN, SITES_OPEN_PORT (the firewall's open port).
set -euo pipefail

SCENARIO=${1:?usage: run_sites.sh site-path|exchange|one-port|no-direct}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"

PERF=${LP_PERF:?LP_PERF must name lp-perf}
GATEWAYS=${LP_GATEWAYS:?LP_GATEWAYS must name netem/gateways}
INSTANCE=${LP_WAN_INSTANCE:?LP_WAN_INSTANCE must name the fixture instance}
OPEN_PORT=${SITES_OPEN_PORT:?SITES_OPEN_PORT must name the firewall open port}
: "${LONGPIPE_GATEWAY:?LONGPIPE_GATEWAY must name the site path}"
export LONGPIPE_GATEWAY
readonly SITES=3 HOSTS=2
readonly PERF_PORT=7501 ECHO_PORT=7502   # compute hosts' own ports (the firewall is on the gateways)
readonly RUN_SECONDS=60                  # one client's limit; more is a hang
readonly PERF_COUNT=100 PERF_BATCHES=3 PERF_PINGS=3
readonly STREAM_LINES=2000
readonly COUNT_TABLE=lp_sites_count      # the core router's counting table (inet family)
CORE_NS=lp-$INSTANCE-core

unset LD_PRELOAD
WORK=$(mktemp -d /tmp/lp-sites-test.XXXXXX)
# The job's key: lp-perf serve and run need the same one.
(umask 077 && openssl rand -hex 32 >"$WORK/job.key")
export LONGPIPE_KEY_FILE=$WORK/job.key
cleanup_first() { ip netns exec "$CORE_NS" nft delete table inet "$COUNT_TABLE" 2>/dev/null || true; }
finish() {
  local status=$?
  cleanup_first
  local pid
  for pid in "${PIDS[@]}"; do kill -9 -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  remove_work_unless_failed "$status"
  exit "$status"
}
trap finish EXIT

# shellcheck source=sites_lib.sh
source "$HERE/sites_lib.sh"

# ask_in HOST REQUEST: one request to the site path from inside HOST (which must be a socket).
ask_in() {
  "$WAN" exec "$1" /usr/bin/python3 - "$LONGPIPE_GATEWAY" "$2" <<'PY'
import os, socket, stat, sys
if not stat.S_ISSOCK(os.stat(sys.argv[1]).st_mode):
    sys.exit(f"{sys.argv[1]} is not a socket")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(("LONGPIPE-GATEWAY/1 " + sys.argv[2] + "\n").encode())
answer = b""
while chunk := s.recv(65536):
    answer += chunk
print(answer.decode(errors="replace").strip())
PY
}

scenario_site_path() {
  local site k host answer
  for ((site = 1; site <= SITES; site++)); do
    for host in "s$site-gw" $(for ((k = 1; k <= HOSTS; k++)); do echo "s$site-h$k"; done); do
      answer=$(ask_in "$host" SITE 2>&1) || fail "$host: the site path did not answer: $answer"
      [[ $answer == "OK S$site" ]] || fail "$host: the site path names '$answer', not site S$site's gateway"
    done
  done
  "$GATEWAYS" status --json | /usr/bin/python3 -c '
import json, sys
status = json.load(sys.stdin)
assert set(status) == {"S1", "S2", "S3"}, status.keys()
for site, s in status.items():
    peers = {p["site"]: p for p in s["peers"]}
    others = {"S1", "S2", "S3"} - {site}
    assert set(peers) == others, (site, peers.keys())
    assert all(p["up"] for p in peers.values()), (site, peers)' || fail "gateways status --json: not three gateways, each with the other two as peers, up"
  pass "site-path: in every host of each site the site path names that site's gateway; each gateway has the other two as peers"
}

# exchange: the run that site-path checks nothing of and one-port counts.
exchange() {
  perf_server s2 s2-h1
  perf_server s3 s3-h1
  perf_client s1-to-s2 s1-h1 "S2/s2-h1:$PERF_PORT"
  perf_client s3-to-s2 s3-h2 "S2/10.2.0.11:$PERF_PORT"
  perf_client s1-to-s3 s1-h2 "S3/10.3.0.11:$PERF_PORT"
  finish_client s1-to-s2 "S2/s2-h1:$PERF_PORT"
  finish_client s3-to-s2 "S2/10.2.0.11:$PERF_PORT"
  finish_client s1-to-s3 "S3/10.3.0.11:$PERF_PORT"
  stop_server s2 $((2 * $(client_messages)))
  stop_server s3 "$(client_messages)"
  numbered_stream s1-h1 3 s3-h2 || fail "the numbered stream from s1-h1 to S3/s3-h2 did not come back whole and in order"
}

scenario_exchange() {
  exchange
  pass "exchange: lp-perf S1->S2, S3->S2, S1->S3 between private compute hosts through the gateways, every message once; a numbered stream S1->S3 in order"
}

# The core router's counters: per ordered pair of gateways on the open port (as destination or
# source port), packets from or to a site LAN, and every other forwarded packet.
install_counters() {
  local s t rules=""
  for ((s = 1; s <= SITES; s++)); do
    for ((t = 1; t <= SITES; t++)); do
      ((s == t)) && continue
      rules+="    ip saddr 172.31.0.$s ip daddr 172.31.0.$t meta l4proto { tcp, udp } th dport $OPEN_PORT counter name gw${s}_gw${t} accept
    ip saddr 172.31.0.$s ip daddr 172.31.0.$t meta l4proto { tcp, udp } th sport $OPEN_PORT counter name gw${s}_gw${t} accept
"
    done
  done
  local counters
  counters=$(for ((s = 1; s <= SITES; s++)); do for ((t = 1; t <= SITES; t++)); do ((s == t)) || echo "  counter gw${s}_gw${t} { }"; done; done)
  ip netns exec "$CORE_NS" nft delete table inet "$COUNT_TABLE" 2>/dev/null || true
  ip netns exec "$CORE_NS" nft -f - <<EOF
table inet $COUNT_TABLE {
$counters
  counter lan { }
  counter other { }
  chain forward {
    type filter hook forward priority -10; policy accept;
    ip saddr 10.0.0.0/8 counter name lan accept
    ip daddr 10.0.0.0/8 counter name lan accept
$rules    counter name other accept
  }
}
EOF
}

# counter NAME: packets counted so far.
counter() {
  ip netns exec "$CORE_NS" nft list counter inet "$COUNT_TABLE" "$1" | awk '/packets/ {for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1)}'
}

scenario_one_port() {
  install_counters
  exchange
  ip netns exec "$CORE_NS" nft list table inet "$COUNT_TABLE" >"$WORK/counters.txt"
  local lan other pair
  lan=$(counter lan) other=$(counter other)
  ((lan == 0)) || fail "$lan packets from or to a site LAN crossed the core: $(cat "$WORK/counters.txt")"
  ((other == 0)) || fail "$other packets between sites were not gateway-to-gateway on port $OPEN_PORT: $(cat "$WORK/counters.txt")"
  # The pairs of sites the exchange uses: S1<->S2, S3<->S2, S1<->S3.
  for pair in 1_2 2_1 3_2 2_3 1_3 3_1; do
    local value
    value=$(counter "gw${pair%_*}_gw${pair#*_}")
    ((value > 0)) || fail "no packet from gateway ${pair%_*} to gateway ${pair#*_} on port $OPEN_PORT: $(cat "$WORK/counters.txt")"
    say "gateway ${pair%_*} -> ${pair#*_} on port $OPEN_PORT: $value packets"
  done
  pass "one-port: lp-perf S1->S2, S3->S2, S1->S3 through the gateways, every message once, a numbered stream S1->S3 in order; every packet between sites was gateway to gateway on port $OPEN_PORT; none from or to a site LAN"
}

# connect_from HOST ADDRESS PORT: the error of a direct TCP dial from HOST (or "connected").
connect_from() {
  "$WAN" exec "$1" /usr/bin/python3 -c '
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
    print("connected")
except OSError as error:
    print(error.strerror or error)' "$2" "$3"
}

scenario_no_direct() {
  perf_server s2 s2-h1
  local from target answer
  for from in s1-h1 s3-h2; do
    for target in "10.2.0.11:$PERF_PORT" "10.2.0.1:$PERF_PORT" "172.31.0.2:$OPEN_PORT"; do
      answer=$(connect_from "$from" "${target%:*}" "${target#*:}")
      [[ $answer == "Network is unreachable" ]] || fail "$from dialling $target directly: '$answer', not 'Network is unreachable'"
    done
  done
  # The engine alone, told to give up on a silent path after 3 s: its dial finds no route.
  local status=0 output
  output=$(env -u LONGPIPE_GATEWAY LONGPIPE_SILENT_PATH_MS=3000 LONGPIPE_DEAD_PEER_MS=3000 LONGPIPE_KEEPALIVE_MS=1000 \
    "$WAN" exec s1-h1 timeout "$RUN_SECONDS" "$PERF" run --peer "10.2.0.11:$PERF_PORT" --count 5 --batches 1 --pings 1 2>&1) || status=$?
  ((status != 0 && status != 124)) || fail "lp-perf without LONGPIPE_GATEWAY: status $status (reached site 2, or hung): $output"
  grep -q 'Network is unreachable' <<<"$output" || fail "lp-perf without LONGPIPE_GATEWAY failed for another reason than no route: $output"
  say "lp-perf without the gateway: $(grep -m1 'Network is unreachable' <<<"$output" | cut -c1-200)"
  pass "no-direct: compute hosts of sites 1 and 3 cannot dial site 2's hosts or gateway; the engine without a gateway fails"
}

case $SCENARIO in
  site-path) scenario_site_path ;;
  exchange) scenario_exchange ;;
  one-port) scenario_one_port ;;
  no-direct) scenario_no_direct ;;
  *) fail "unknown scenario '$SCENARIO'" ;;
esac
