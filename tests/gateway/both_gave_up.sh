#!/usr/bin/env bash
# both_gave_up.sh: two site gateways whose connections are refused both ways for longer than their
# engines' dead-peer timeout give up on each other (the dialling one first, the other once its dials
# meet the first one's failed session); once the refusals end they find each other again through the
# gateway's retry of refused peers (every 60 s, daemon/README.md), without a restart.
# A run by hand, not in ctest: it waits up to a retry period, which CI's time cannot spare.
#
# Usage (root, from a build tree's checkout): LONGPIPE_BUILD_DIR=build tests/gateway/both_gave_up.sh
# Brings up its own link and gateways (instance both-gave-up) and takes them down at the end.
set -euo pipefail

HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../lib/itest_common.sh
source "$HERE/../lib/itest_common.sh"
need_build_dir
readonly INSTANCE=both-gave-up DEAD_PEER_MS=3000 REFUSED_LIMIT_SECONDS=40 RETRY_LIMIT_SECONDS=90
WAN=("$ROOT/netem/wan" --instance "$INSTANCE")
GATEWAYS=("$ROOT/netem/gateways" --instance "$INSTANCE")

refusals_off() { local site; for site in a b; do "${WAN[@]}" exec $site nft delete table inet lp_refuse 2>/dev/null || true; done; }
cleanup() {
  refusals_off
  "${GATEWAYS[@]}" down >/dev/null 2>&1 || true
  "${WAN[@]}" down >/dev/null 2>&1 || true
}
trap cleanup EXIT

# peer SITE: "<up> <instance>" of the other site's gateway as SITE's gateway sees it.
peer() {
  "${GATEWAYS[@]}" ask "$1" STATUS json |
    /usr/bin/python3 -c 'import json, sys; p = json.load(sys.stdin)["peers"][0]; print(p["up"], p.get("instance", "-"))'
}
logged() { grep -c "$2" "$LONGPIPE_BUILD_DIR/gateways/lp-$INSTANCE/$1.log" || true; }

"${WAN[@]}" up --delay 5 >/dev/null
"${GATEWAYS[@]}" up --engine LONGPIPE_DEAD_PEER_MS=$DEAD_PEER_MS --engine LONGPIPE_KEEPALIVE_MS=300 >/dev/null
read -r up_a instance_b < <(peer a)
read -r up_b instance_a < <(peer b)
[[ $up_a == True && $up_b == True ]] || fail "the gateways are not up to each other at the start"

# Every packet from the link is refused (TCP reset, ICMP for UDP) in both sites: each engine sees
# its peer's host refuse connections and gives up after LONGPIPE_DEAD_PEER_MS.
for site in a b; do
  "${WAN[@]}" exec $site nft add table inet lp_refuse
  "${WAN[@]}" exec $site nft add chain inet lp_refuse in '{ type filter hook input priority 0; }'
  "${WAN[@]}" exec $site nft add rule inet lp_refuse in iifname lpwan0 meta l4proto tcp reject with tcp reset
  "${WAN[@]}" exec $site nft add rule inet lp_refuse in iifname lpwan0 meta l4proto udp reject
done
# The gateway that dials sees the refusals; the other may hold only the connection its peer opened,
# and gives up in turn once the refusals end, when the first one's failed session closes its dials.
for ((refused = 0; refused < REFUSED_LIMIT_SECONDS; refused++)); do
  (($(logged a "down: no sign of life") + $(logged b "down: no sign of life") > 0)) && break
  sleep 1
done
refusals_off
(($(logged a "down: no sign of life") + $(logged b "down: no sign of life") > 0)) ||
  fail "neither gateway gave up on its peer within $REFUSED_LIMIT_SECONDS s of refusals"
say "a gateway gave up on its peer after ${refused} s of refusals; refusals over"

for ((waited = 0; waited < RETRY_LIMIT_SECONDS; waited++)); do
  read -r up_a now_b < <(peer a)
  read -r up_b now_a < <(peer b)
  [[ $up_a == True && $up_b == True ]] && break
  sleep 1
done
[[ $up_a == True && $up_b == True ]] || fail "the gateways did not find each other again within $RETRY_LIMIT_SECONDS s (A sees B up: $up_a, B sees A up: $up_b)"
[[ $now_a == "$instance_a" && $now_b == "$instance_b" ]] || fail "a gateway restarted (instances $instance_a/$instance_b, now $now_a/$now_b)"
gave_up=""
for site in a b; do
  (($(logged $site "down: no sign of life") > 0)) || continue
  gave_up+=" $site"
  (($(logged $site "trying again") > 0)) || fail "gateway $site gave up and found its peer again without a retry: the test did not test the retry"
done
pass "gave up:$gave_up; retried, and both up again ${waited} s after the refusals ended, same gateway processes"
