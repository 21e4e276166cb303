#!/usr/bin/env bash
# A consumer behind a slower link is isolated by LongPipe's drop-oldest policy.
#
# cfd-producer on site-a streams frames to two cfd-consumers it spawns on site-b, across the ctest
# fixture's emulated link (netem/wan, instance $LP_WAN_INSTANCE), under LD_PRELOAD=liblongpipe.so
# with LONGPIPE_WINDOW_FULL=drop-oldest and a window of 16. Both consumers render at full speed;
# consumer 1 is slow because its link is: netem/slow-path limits what site-a sends to its TCP
# ports (its LongPipe sessions) to SLOW_LINK_MBIT, far below the producer's frame stream, while
# consumer 0 keeps the full link.
#
# Asserted, by behaviour only (no timing):
#   - both consumers: frames once, in order, uncorrupted; gaps only where the producer's LongPipe
#     session to that consumer dropped by policy, frame for frame (check_result.py);
#   - the fast consumer received every frame, the slow-link one an in-order subset with gaps, all
#     dropped by its session's policy (check_isolation.py);
#   - the slowed class carried the slow consumer's frames and was held to its rate: at least half
#     of the bytes it received went through that htb class, and the class was over its rate
#     (overlimits > 0) — so the gaps come from the slower link, not from anything else — and it
#     carried less than the slow consumer's bytes plus half the fast one's: the fast consumer's
#     traffic was not limited.
# Usage: slow_link_test.sh BIN_DIR LIBLONGPIPE
set -euo pipefail

BIN=${1:?usage: $0 BIN_DIR LIBLONGPIPE}
LIBRARY=${2:?usage: $0 BIN_DIR LIBLONGPIPE}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PVM_SITES=$ROOT/apps/pvm-sites/pvm-sites
SLOW_PATH=$ROOT/netem/slow-path
# shellcheck source=common.sh
source "$HERE/common.sh"
: "${LP_WAN_INSTANCE:?run through ctest (the fixture sets LP_WAN_INSTANCE), or set it to a link that is up}"

# 300 frames of 32 KB at ~40 frames/s (100 solver steps per frame): ~10 Mbit/s offered to each
# consumer. The slow link (0.5 Mbit/s, ~1.9 frames/s) cannot keep up, and its session holds at most
# 16 in flight + 16 queued, so it must drop; a window of 16 carries 16 frames per 50 ms round trip
# to the fast consumer, far above its ~40 frames/s, so that session never fills. (At 2 Mbit/s, ~7.6
# frames/s, a loaded machine's solver made only 3.5 frames/s and nothing had to be dropped.)
readonly FRAMES=300 STEPS_PER_FRAME=100 CONSUMERS=2 SITE_B=site-b
readonly FAST=0 SLOW=1 SLOW_LINK_MBIT=0.5 SLOW_CLASS=11
# Enough for the whole run (~15 s, and ~40 s more while the slow link drains the slow consumer's
# backlog at the end); the limit only stops a hang.
readonly RUN_SECONDS=120

WORK=$(mktemp -d /tmp/cfd-slow-link-test.XXXXXX)
follower=
cleanup() {
  local status=$?
  [[ -n $follower ]] && { kill "$follower" 2>/dev/null || true; wait "$follower" 2>/dev/null || true; }
  "$SLOW_PATH" down || echo "warning: slow-path down failed" >&2
  two_site_down "$status"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

two_site_up "$LIBRARY"

"$SLOW_PATH" up
"$SLOW_PATH" follow --class $SLOW_CLASS --mbit $SLOW_LINK_MBIT --cmdline "cfd-consumer .*--index $SLOW " \
  2>"$WORK/slow-path.log" &
follower=$!

# As in two_site_longpipe_test.sh: LONGPIPE_* through pvm-sites' environment (the consumers get
# them too), LONGPIPE_STATS for the producer alone.
status=0
env LONGPIPE_WINDOW_FULL=drop-oldest LONGPIPE_WINDOW_MESSAGES=16 timeout "$RUN_SECONDS" \
  "$HERE/../sites_exec_preloaded.sh" "$PVM_SITES" a "$LIBRARY" env LONGPIPE_STATS="$WORK/producer.stats.json" \
  "$BIN/cfd-producer" --consumer-host $SITE_B --consumers $CONSUMERS --frames $FRAMES --grid 128x64 \
  --steps-per-frame $STEPS_PER_FRAME --warmup-steps 1000 --allow-drops --out "$WORK/out" \
  --json "$WORK/result.json" --summary-timeout 60 >"$WORK/producer.out" 2>&1 || status=$?
cat "$WORK/producer.out"
((status == 0)) || fail "cfd-producer exited with status $status"
kill "$follower"; wait "$follower" 2>/dev/null || true; follower=
cat "$WORK/slow-path.log"
"$SLOW_PATH" stats >"$WORK/slow-path.stats"
cat "$WORK/slow-path.stats"

"$HERE/check_result.py" "$WORK/result.json" $FRAMES $CONSUMERS --host $SITE_B --allow-drops \
  --longpipe-stats "$WORK/producer.stats.json" || fail "the run did not deliver as configured"
"$HERE/check_isolation.py" "$WORK/result.json" $FRAMES --fast $FAST --slow $SLOW \
  --longpipe-stats "$WORK/producer.stats.json" ||
  fail "the consumer behind the slower link was not isolated from the fast one"

# The slowed class: "class 1:N bytes B packets P dropped D overlimits O ports LIST".
read -r _ _ _ class_bytes _ _ _ _ _ overlimits _ ports < <(grep "^class 1:$SLOW_CLASS " "$WORK/slow-path.stats") ||
  fail "no htb class 1:$SLOW_CLASS on site-a's link"
[[ $ports != - ]] || fail "slow-path found no TCP port of the slow consumer"
# received_bytes I: the frame bytes consumer I received.
received_bytes() {
  /usr/bin/python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(r["consumers"][int(sys.argv[2])]["frames_received"] * r["producer"]["frame_bytes"])' "$WORK/result.json" "$1"
}
received_bytes=$(received_bytes $SLOW) fast_bytes=$(received_bytes $FAST)
((class_bytes * 2 >= received_bytes)) ||
  fail "only $class_bytes bytes went through the slow link's class, the slow consumer received $received_bytes"
# The fast consumer's frames did not: had they, the class would hold them too (all but the few
# sent before the filters caught up).
((class_bytes < received_bytes + fast_bytes / 2)) ||
  fail "$class_bytes bytes went through the slow link's class: more than the slow consumer's $received_bytes, the fast one's traffic was limited too"
((overlimits > 0)) || fail "the slow link's class was never over its rate: the link was not what slowed the consumer"
echo "slow link: class 1:$SLOW_CLASS (ports $ports) carried $class_bytes bytes for $received_bytes received, overlimits $overlimits"

check_consumers_pngs "$BIN" "$WORK/out" "$WORK/result.json" $CONSUMERS
echo PASS
