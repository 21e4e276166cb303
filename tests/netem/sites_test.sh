#!/usr/bin/env bash
# Integration checks of the multi-site mode of netem/wan (up --sites). Run by ctest; each check fails
# loudly. DELAYS is the comma-separated one-way delay (ms) of each site's access link, in site order.
#   sites_test.sh lan DELAYS HOSTS         (inside a fixture: LP_WAN_INSTANCE set)
#   sites_test.sh isolation DELAYS HOSTS
#   sites_test.sh gateways DELAYS HOSTS    (gateway to gateway: open port, one-way delay)
#   sites_test.sh firewall DELAYS HOSTS
#   sites_test.sh up-down INSTANCE         (manages its own sites)
set -euo pipefail

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"
PYTHON=/usr/bin/python3
STATE_ROOT=/run/longpipe/wan
OPEN_PORT=7447     # netem/wan's default open port
CLOSED_PORT=7448   # a port the gateways listen on but the firewall closes towards the core

# probe HOST ADDRESS PORT: from HOST, a TCP connection to ADDRESS:PORT; prints "connected <name>"
# (the listener's greeting), "refused", "unreachable" or "timeout".
probe() {
  "$WAN" exec "$1" "$PYTHON" -c '
import errno, socket, sys
try:
    connection = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    print("connected", connection.recv(64).decode().strip())
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")
except OSError as error:
    print("unreachable" if error.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH) else "error %s" % error)' "$2" "$3"
}

# serve_gateways: every gateway listens on the open and the closed port and greets with its name.
serve_gateways() {
  local site
  for ((site = 1; site <= SITES; site++)); do
    "$WAN" exec "s$site-gw" "$PYTHON" -c '
import socket, sys, threading
def serve(port):
    server = socket.create_server(("0.0.0.0", port))
    while True:
        connection, _ = server.accept()
        connection.sendall(sys.argv[1].encode() + b"\n")
        connection.close()
for port in sys.argv[2:]:
    threading.Thread(target=serve, args=(int(port),), daemon=True).start()
threading.Event().wait(100)' "s$site-gw" $OPEN_PORT $CLOSED_PORT &
    PIDS+=($!)
  done
  for ((site = 1; site <= SITES; site++)); do
    local tries=0
    until [[ $(probe "s$site-gw" 127.0.0.1 $CLOSED_PORT) == "connected s$site-gw" ]]; do
      ((++tries < 50)) || fail "the listener in s$site-gw did not start"
      sleep 0.1
    done
  done
}

# Minimum RTT (ms) of 5 pings from HOST to ADDRESS; fails if any is lost.
min_rtt() {
  local out
  out=$("$WAN" exec "$1" ping -n -q -c 5 -i 0.2 -W 3 "$2") || fail "ping $1 -> $2 failed: $out"
  grep -q ' 5 received' <<<"$out" || fail "ping $1 -> $2 lost echoes: $out"
  awk -F'[=/ ]+' '/^(rtt|round-trip)/ {print $6}' <<<"$out"
}

check_lan() {
  local site k other
  for ((site = 1; site <= SITES; site++)); do
    for ((k = 1; k <= HOSTS; k++)); do
      [[ $("$WAN" exec "s$site-h$k" hostname) == "s$site-h$k" ]] || fail "s$site-h$k has the wrong host name"
      "$WAN" exec "s$site-h$k" ping -n -q -c 1 -W 3 "s$site-gw" >/dev/null || fail "s$site-h$k does not reach its gateway s$site-gw"
      for ((other = 1; other <= HOSTS; other++)); do
        ((other != k)) || continue
        "$WAN" exec "s$site-h$k" ping -n -q -c 1 -W 3 "s$site-h$other" >/dev/null ||
          fail "s$site-h$k does not reach s$site-h$other in its own site"
      done
    done
  done
  pass "every compute host reaches its own gateway and the other hosts of its site"
}

check_isolation() {
  local site k other out
  for ((site = 1; site <= SITES; site++)); do
    for ((k = 1; k <= HOSTS; k++)); do
      for ((other = 1; other <= SITES; other++)); do
        ((other != site)) || continue
        for address in "10.$other.0.11" "10.$other.0.1" "172.31.0.$other"; do
          out=$("$WAN" exec "s$site-h$k" ping -n -c 1 -W 1 "$address" 2>&1) && fail "s$site-h$k reaches $address in site $other"
          grep -q 'Network is unreachable' <<<"$out" || fail "s$site-h$k -> $address: expected no route, got: $out"
        done
        [[ $(probe "s$site-h$k" "172.31.0.$other" $OPEN_PORT) == unreachable ]] ||
          fail "s$site-h$k has a route to gateway s$other-gw's open port"
      done
    done
    for ((other = 1; other <= SITES; other++)); do
      ((other != site)) || continue
      out=$("$WAN" exec "s$site-gw" ping -n -c 1 -W 1 "10.$other.0.11" 2>&1) && fail "s$site-gw reaches a compute host of site $other"
      grep -q 'Network is unreachable' <<<"$out" || fail "s$site-gw -> 10.$other.0.11: expected no route, got: $out"
    done
  done
  pass "no compute host has a route to another site's hosts or gateway; no gateway to another site's hosts"
}

check_gateways() {
  local site other expected rtt answer
  serve_gateways
  for ((site = 1; site <= SITES; site++)); do
    for ((other = 1; other <= SITES; other++)); do
      ((other != site)) || continue
      answer=$(probe "s$site-gw" "s$other-gw" $OPEN_PORT)
      [[ $answer == "connected s$other-gw" ]] || fail "s$site-gw -> s$other-gw:$OPEN_PORT: $answer"
      ((other > site)) || continue
      # One way gateway -> gateway crosses two access links: RTT = 2 x (delay S + delay T). The
      # bound above is generous: it checks the configuration, not the machine's speed.
      expected=$((2 * (DELAY[site] + DELAY[other])))
      rtt=$(min_rtt "s$site-gw" "172.31.0.$other")
      echo "s$site-gw <-> s$other-gw: min RTT $rtt ms, configured $expected ms"
      awk -v r="$rtt" -v e="$expected" 'BEGIN { exit !(r >= e && r <= 1.5 * e + 10) }' ||
        fail "s$site-gw <-> s$other-gw: min RTT $rtt ms is not about the configured $expected ms"
    done
  done
  pass "gateways reach each other through the core on port $OPEN_PORT, RTT = 2 x the sum of their access delays"
}

check_firewall() {
  local site other answer
  serve_gateways
  for ((site = 1; site <= SITES; site++)); do
    for ((other = 1; other <= SITES; other++)); do
      ((other != site)) || continue
      answer=$(probe "s$site-gw" "172.31.0.$other" $CLOSED_PORT)
      [[ $answer == refused ]] || fail "s$site-gw -> s$other-gw:$CLOSED_PORT (closed by the firewall): $answer"
    done
    # The firewall faces the core only: the site's own LAN reaches every port of its gateway.
    answer=$(probe "s$site-h1" "s$site-gw" $CLOSED_PORT)
    [[ $answer == "connected s$site-gw" ]] || fail "s$site-h1 -> s$site-gw:$CLOSED_PORT on the LAN: $answer"
  done
  pass "between gateways only port $OPEN_PORT passes ($CLOSED_PORT is refused); the LAN is not filtered"
}

# --- up-down: a private instance -------------------------------------------------------------

# Namespaces, /etc/netns entries and live emulators of instance $1; prints what is left.
leftovers() {
  local instance=$1 pid
  ip netns list | awk '{print $1}' | grep -E "^lp-$instance-" || true
  ls -d /etc/netns/lp-"$instance"-* 2>/dev/null || true
  [[ ! -e $STATE_ROOT/lp-$instance ]] || echo "$STATE_ROOT/lp-$instance"
  for pid in $(grep -lxs lp-linkemu /proc/[0-9]*/comm | cut -d/ -f3); do
    [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] || continue
    tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "^lp-$instance-" && echo "emulator $pid"
  done
  return 0
}

emulator_count() {
  local pid n=0
  for pid in $(grep -lxs lp-linkemu /proc/[0-9]*/comm | cut -d/ -f3); do
    [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]] || continue
    tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qx "lp-$1-core" && n=$((n + 1))
  done
  echo "$n"
}

check_up_down() {
  local instance=$1 left status fake
  need_build_dir
  OWN_INSTANCE=$instance   # for the clean-up, which runs after this function has returned
  cleanup_first() { "$WAN" --instance "$OWN_INSTANCE" down >/dev/null 2>&1 || true; }
  trap itest_cleanup EXIT
  local up=("$WAN" --instance "$instance" up --sites lan:delay=1,transatlantic:delay=2,thin:delay=1 --hosts 1)
  "${up[@]}"
  "${up[@]}"
  [[ $(emulator_count "$instance") == 3 ]] || fail "two ups left $(emulator_count "$instance") emulators, not 3"
  status=$("$WAN" --instance "$instance" status) || fail "status failed with the sites up"
  for word in "s1-gw  lp-$instance-s1-gw  172.31.0.1" "s3-h1  lp-$instance-s3-h1  10.3.0.11" "profile thin:delay=1" "2 Mbit/s"; do
    grep -qF -- "$word" <<<"$status" || fail "status does not show '$word': $status"
  done
  "$WAN" --instance "$instance" down
  left=$(leftovers "$instance")
  [[ -z $left ]] || fail "down left: $left"
  "$WAN" --instance "$instance" down || fail "a second down failed"
  ! "$WAN" --instance "$instance" status >/dev/null || fail "status succeeds with nothing up"

  # A crash: emulators killed, state directory lost; down still finds and removes everything.
  "${up[@]}"
  kill -9 "$(cat "$STATE_ROOT/lp-$instance/emulator-s2.pid")"
  rm -rf "${STATE_ROOT:?}/lp-$instance"
  "$WAN" --instance "$instance" down
  left=$(leftovers "$instance")
  [[ -z $left ]] || fail "down after a crash left: $left"

  # An up that fails half-way (the second access link's emulator does not start) removes what it built.
  WORK=$(mktemp -d)
  mkdir -p "$WORK/netem"
  fake=$WORK/netem/lp-linkemu
  printf '#!/bin/sh\ncase " $* " in *" --validate "*|*lpacc1*) exec %q "$@" ;; esac\necho "fake: refusing" >&2\nexit 1\n' \
    "$BUILD/netem/lp-linkemu" >"$fake"
  chmod +x "$fake"
  if LONGPIPE_BUILD_DIR=$WORK "${up[@]}" 2>"$WORK/up.err"; then fail "up succeeded with a failing emulator"; fi
  grep -q "site 2's access link did not start" "$WORK/up.err" || fail "up's error does not name the site: $(cat "$WORK/up.err")"
  left=$(leftovers "$instance")
  [[ -z $left ]] || fail "a failed up left: $left"

  # The two modes replace each other in one instance.
  "$WAN" --instance "$instance" up --delay 1 >/dev/null 2>&1
  "${up[@]}"
  ip netns list | grep -q "^lp-$instance-site-a" && fail "up --sites left the two-site link of the instance"
  "$WAN" --instance "$instance" up --delay 1 >/dev/null 2>&1
  ip netns list | grep -q "^lp-$instance-core" && fail "up (two sites) left the multi-site core of the instance"
  "$WAN" --instance "$instance" down
  left=$(leftovers "$instance")
  [[ -z $left ]] || fail "down left: $left"

  # Bad values are rejected before anything is touched.
  for bad in "--sites nosuch" "--sites lan:delay=-1" "--sites lan:colour=red" "--sites lan --hosts 999" "--sites lan --open-port 0"; do
    # shellcheck disable=SC2086
    if "$WAN" --instance "$instance" up $bad 2>/dev/null; then fail "up accepted $bad"; fi
  done
  left=$(leftovers "$instance")
  [[ -z $left ]] || fail "a rejected up left: $left"
  pass "up is idempotent, down leaves nothing (also after a crash and a failed up), modes replace each other"
}

check=${1:?usage: sites_test.sh lan|isolation|gateways|firewall DELAYS HOSTS | up-down INSTANCE}
if [[ $check == up-down ]]; then
  check_up_down "${2:?instance}"
  exit 0
fi
IFS=, read -r -a delays <<<"${2:?delays}"
DELAY=(0 "${delays[@]}")   # DELAY[S]: site S's one-way access delay
SITES=${#delays[@]}
HOSTS=${3:?hosts}
trap itest_cleanup EXIT
case $check in
  lan) check_lan ;;
  isolation) check_isolation ;;
  gateways) check_gateways ;;
  firewall) check_firewall ;;
  *) fail "unknown check '$check'" ;;
esac
