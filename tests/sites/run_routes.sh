#!/usr/bin/env bash
# run_routes.sh SCENARIO: paths between site gateways other than a session each way, on the
# three-site fixture (netem/wan up --sites ... --hosts 2, firewall on). Each scenario brings the
# gateways up again with netem/gateways' options and restores the fixture's plain ones at the end,
# also on failure.
#
#   reverse  site S2 dials out only (netem/gateways up --dial-out S2: its gateway host drops every
#            new connection to the open port; S1 and S3 name it `peer S2 dial-in`): lp-perf from
#            S1 to S2 and from S2 to S3, numbered echo streams S1->S2 and S2->S3 through CONNECT,
#            every message once and every line in order; S2's engine accepted no connection and
#            the other gateways show S2 as an up dial-in peer
#   relay    S1 and S3 cut apart at the core (netem/gateways up --relay S1,S3,S2: the core router
#            drops their gateways' packets; S1 routes S3 via S2 and S3 routes S1 via S2, S2 relays
#            them): a numbered echo stream and lp-perf from S1's compute hosts to S3's
#            through S2; no packet between the gateways of S1 and S3 crossed the core (counted
#            before the drop), and S2's STATUS shows the relayed stream while it is open
#
# Environment: LP_PERF, LP_GATEWAYS (netem/gateways), LP_DAEMON (longpiped), LP_GATEWAYS_DIR (the
# fixture's directory), LONGPIPE_GATEWAY, LP_WAN_INSTANCE, LONGPIPE_WAN, SITES_OPEN_PORT.
set -euo pipefail

SCENARIO=${1:?usage: run_routes.sh reverse|relay}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"

PERF=${LP_PERF:?LP_PERF must name lp-perf}
GATEWAYS=${LP_GATEWAYS:?LP_GATEWAYS must name netem/gateways}
DAEMON=${LP_DAEMON:?LP_DAEMON must name longpiped}
GW_DIR=${LP_GATEWAYS_DIR:?LP_GATEWAYS_DIR must name the fixture gateways directory}
INSTANCE=${LP_WAN_INSTANCE:?LP_WAN_INSTANCE must name the fixture instance}
OPEN_PORT=${SITES_OPEN_PORT:?SITES_OPEN_PORT must name the firewall open port}
: "${LONGPIPE_GATEWAY:?LONGPIPE_GATEWAY must name the site path}"
export LONGPIPE_GATEWAY
readonly PERF_PORT=7511 ECHO_PORT=7512   # compute hosts' own ports
readonly RUN_SECONDS=40                  # one client's limit; more is a hang
readonly PERF_COUNT=50 PERF_BATCHES=2 PERF_PINGS=2
readonly STREAM_LINES=1500
readonly COUNT_TABLE=lp_routes_count     # the core router's counting table (inet family)
CORE_NS=lp-$INSTANCE-core

unset LD_PRELOAD
WORK=$(mktemp -d /tmp/lp-routes-test.XXXXXX)
(umask 077 && openssl rand -hex 32 >"$WORK/job.key")
export LONGPIPE_KEY_FILE=$WORK/job.key
finish() {
  local status=$?
  ip netns exec "$CORE_NS" nft delete table inet "$COUNT_TABLE" 2>/dev/null || true
  local pid
  for pid in "${PIDS[@]}"; do kill -9 -- "-$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  # The fixture's plain gateways again (which also removes the paths' nftables rules).
  "$GATEWAYS" up --dir "$GW_DIR" --daemon "$DAEMON" >/dev/null 2>"$WORK/restore.err" ||
    { cat "$WORK/restore.err" >&2; echo "FAIL: could not restore the fixture's gateways" >&2; status=1; }
  remove_work_unless_failed "$status"
  exit "$status"
}
trap finish EXIT

# shellcheck source=sites_lib.sh
source "$HERE/sites_lib.sh"

gateways_up() {
  "$GATEWAYS" up --dir "$GW_DIR" --daemon "$DAEMON" "$@" 2>"$WORK/up.err" || { cat "$WORK/up.err" >&2; fail "netem/gateways up $*"; }
}

scenario_reverse() {
  gateways_up --dial-out S2
  grep -qx "peer S2 dial-in" "$GW_DIR/s1.conf" || fail "s1.conf does not name S2 dial-in: $(cat "$GW_DIR/s1.conf")"
  perf_pair s2-h1 s1-h1 "S2/10.2.0.11:$PERF_PORT"   # towards the dial-out site
  perf_pair s3-h1 s2-h2 "S3/10.3.0.11:$PERF_PORT"   # from it
  numbered_stream s1-h1 2 s2-h2 || fail "the numbered stream S1->S2 did not come back whole and in order"
  numbered_stream s2-h1 3 s3-h2 || fail "the numbered stream S2->S3 did not come back whole and in order"
  "$GATEWAYS" status --json >"$WORK/status.json" || fail "gateways status: $(cat "$WORK/status.json")"
  /usr/bin/python3 - "$WORK/status.json" <<'PY' || fail "the gateways' status does not show the reverse mode: $(cut -c1-2000 "$WORK/status.json")"
import json, sys
status = json.load(open(sys.argv[1]))
accepted = status["S2"]["engine"]["accepted_connections"]
assert accepted == 0, f"S2's engine accepted {accepted} connections"
# The counter counts: S1 and S3 accepted S2's connections (and each other's).
assert all(status[site]["engine"]["accepted_connections"] > 0 for site in ("S1", "S3")), "S1 or S3 accepted nothing"
for site in ("S1", "S3"):
    peer = {p["site"]: p for p in status[site]["peers"]}["S2"]
    assert peer["mode"] == "dial-in" and peer["up"], (site, peer)
assert all(p["mode"] == "dial" for p in status["S2"]["peers"]), status["S2"]["peers"]
PY
  local dropped
  dropped=$(ip netns exec "lp-$INSTANCE-s2-gw" nft list table inet lp_gateway_paths | grep -o "packets [0-9]*" | head -n1 | cut -d" " -f2)
  say "S2's gateway host dropped ${dropped:-no} new inbound packets on port $OPEN_PORT; its engine accepted none"
  pass "reverse: S2 dials out only; lp-perf S1->S2 and S2->S3 every message once, numbered streams in order, S2 accepted no connection"
}

# counter NAME: packets the core's counting table counted.
counter() {
  ip netns exec "$CORE_NS" nft list counter inet "$COUNT_TABLE" "$1" | awk '/packets/ {for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1)}'
}

scenario_relay() {
  gateways_up --relay S1,S3,S2
  grep -qx "route S3 via S2" "$GW_DIR/s1.conf" && grep -qx "relay S1 S3" "$GW_DIR/s2.conf" ||
    fail "the configs do not route S1<->S3 via S2: $(cat "$GW_DIR/s1.conf" "$GW_DIR/s2.conf")"
  # Counted before the paths' drop (priority -10): every packet between the gateways of S1 and S3.
  ip netns exec "$CORE_NS" nft delete table inet "$COUNT_TABLE" 2>/dev/null || true
  ip netns exec "$CORE_NS" nft -f - <<NFT
table inet $COUNT_TABLE {
  counter s1_s3 { }
  counter via_s2 { }
  chain forward {
    type filter hook forward priority -20; policy accept;
    ip saddr 172.31.0.1 ip daddr 172.31.0.3 counter name s1_s3
    ip saddr 172.31.0.3 ip daddr 172.31.0.1 counter name s1_s3
    ip saddr 172.31.0.2 counter name via_s2
  }
}
NFT
  numbered_stream s1-h1 3 s3-h2 3 >"$WORK/held.out" 2>&1 &
  local held=$!
  PIDS+=("$held")
  local seen=0
  for _ in $(seq 1 100); do
    if grep -q echoed "$WORK/held.out" 2>/dev/null; then
      "$GATEWAYS" ask S2 "STATUS json" >"$WORK/s2.json" 2>&1 || true
      if /usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert any(r["from"] == "S1" and r["to"] == "S3" and r["bytes_forward"] > 0 and r["bytes_back"] > 0 for r in s["relayed_streams"])' "$WORK/s2.json" 2>/dev/null; then
        seen=1
        break
      fi
    fi
    sleep 0.1
  done
  wait "$held" || fail "the numbered stream S1->S3 through S2 did not come back whole and in order: $(cat "$WORK/held.out")"
  ((seen)) || fail "S2's STATUS never showed the relayed stream S1->S3: $(cut -c1-1500 "$WORK/s2.json")"
  perf_pair s3-h1 s1-h2 "S3/10.3.0.11:$PERF_PORT"
  local direct through
  direct=$(counter s1_s3) through=$(counter via_s2)
  ((direct == 0)) || fail "$direct packets between the gateways of S1 and S3 reached the core"
  ((through > 0)) || fail "no packet from S2's gateway crossed the core"
  pass "relay: S1<->S3 through S2 (no packet between their gateways; S2 showed the relayed stream); numbered stream in order, lp-perf S1->S3 every message once"
}

case $SCENARIO in
  reverse) scenario_reverse ;;
  relay) scenario_relay ;;
  *) fail "unknown scenario '$SCENARIO'" ;;
esac
