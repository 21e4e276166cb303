#!/usr/bin/env bash
# cfd-producer on site-a streams frames to two cfd-consumers it spawns on site-b, across the
# emulated link of the ctest fixture (netem/wan, instance $LP_WAN_INSTANCE), with the unmodified
# PVM binaries under LD_PRELOAD=liblongpipe.so (apps/pvm-sites exec --preload: the consumers
# inherit it through PVM_EXPORT). Tears the virtual machine down, also on failure.
#
# POLICY block (default, LongPipe's default): every frame arrives once, complete and in order, at
#   both consumers (one of them slowed); their PNGs decode and are not blank; and LongPipe, not the
#   pvmds, carried the frames (the producer's LONGPIPE_STATS: a session to each consumer on site-b
#   that sent every frame, none dropped).
# POLICY drop-oldest|keep-latest: LONGPIPE_WINDOW_FULL=POLICY with a window of a few messages, which
#   the producer overruns: frames are dropped by design, and the producer runs with --allow-drops.
#   Each consumer's frames still arrive once and in order; its gaps are reported as dropped by
#   policy and equal, frame for frame, what its LongPipe session says it discarded.
# POLICY isolation: one consumer fast, one slowed well below the producer's frame rate, with
#   LONGPIPE_WINDOW_FULL=drop-oldest and a small window. The slow consumer stops reading, its
#   engine's bounded queue fills, TCP pushes back, and only its session drops frames: the fast
#   consumer receives every frame in order, the slow one an in-order subset whose gaps equal its
#   session's dropped_by_policy (check_isolation.py). Behaviour only, no timing is asserted.
# POLICY live: block (every frame delivered), both consumers live displays (--display live:
#   rendering off the receive path), the second one's display slowed to 100 ms per frame, far
#   below the producer's rate. Every frame still arrives once and in order at both (the receive
#   path never waits for the display); each display shows frames in increasing order and ends on
#   the last one received, shows or counts as skipped every frame, and the slow one skips frames
#   (check_live.py). The PNGs written decode and are not blank.
# Usage: two_site_longpipe_test.sh BIN_DIR LIBLONGPIPE [POLICY]
set -euo pipefail

BIN=${1:?usage: $0 BIN_DIR LIBLONGPIPE}
LIBRARY=${2:?usage: $0 BIN_DIR LIBLONGPIPE}
POLICY=${3:-block}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PVM_SITES=$ROOT/apps/pvm-sites/pvm-sites
# shellcheck source=common.sh
source "$HERE/common.sh"
: "${LP_WAN_INSTANCE:?run through ctest (the fixture sets LP_WAN_INSTANCE), or set it to a link that is up}"

# Frames, two consumers (the second slowed, so that its session holds a backlog), small grid.
FRAMES=30 SLOW_MS=0,20 STEPS_PER_FRAME=20
readonly CONSUMERS=2 SITE_B=site-b
# The whole run takes ~10 s at 25 ms each way (isolation ~20 s); the limit only stops a hang.
readonly RUN_SECONDS=90

WORK=$(mktemp -d /tmp/cfd-two-site-test.XXXXXX)
cleanup() {
  local status=$?
  two_site_down "$status"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

two_site_up "$LIBRARY"

policy_env=() drops=() display=()
case $POLICY in
  block) ;;
  live)
    FRAMES=60 SLOW_MS=0,100 display=(--display live) ;;
  # Four messages in flight plus four queued per consumer, which the producer must overrun within a
  # round trip (50 ms). One solver step per frame makes 60 frames in a burst of a few tens of ms even
  # on a loaded machine; at 20 steps the loaded solver made only ~25 frames/s, one per round trip,
  # and nothing was dropped.
  drop-oldest|keep-latest)
    FRAMES=60 STEPS_PER_FRAME=1
    policy_env=(LONGPIPE_WINDOW_FULL="$POLICY" LONGPIPE_WINDOW_MESSAGES=4) drops=(--allow-drops) ;;
  # A window of 16 carries 16 frames per 50 ms round trip, far above the producer's ~40 frames/s
  # (100 solver steps per frame), so the fast consumer's session never fills; the slow consumer
  # (100 ms per frame) can hold only ~3 windows plus the front end's small bounds (~80 frames) of
  # the 300, so its session must drop.
  isolation)
    FRAMES=300 SLOW_MS=0,100 STEPS_PER_FRAME=100
    policy_env=(LONGPIPE_WINDOW_FULL=drop-oldest LONGPIPE_WINDOW_MESSAGES=16) drops=(--allow-drops) ;;
  *) fail "unknown policy '$POLICY': expected block, drop-oldest, keep-latest, isolation or live" ;;
esac
readonly FRAMES SLOW_MS STEPS_PER_FRAME

# The LONGPIPE_* settings go through pvm-sites' environment, which passes them on to the consumers.
# LONGPIPE_STATS is set after that (through env), so that it is the producer's alone: the consumers
# would otherwise inherit it and overwrite the file.
status=0
env "${policy_env[@]}" timeout "$RUN_SECONDS" "$HERE/../sites_exec_preloaded.sh" "$PVM_SITES" a "$LIBRARY" \
  env LONGPIPE_STATS="$WORK/producer.stats.json" \
  "$BIN/cfd-producer" --consumer-host $SITE_B --consumers $CONSUMERS --slow-ms $SLOW_MS --frames $FRAMES \
  --grid 128x64 --steps-per-frame $STEPS_PER_FRAME --warmup-steps 1000 "${drops[@]}" "${display[@]}" --out "$WORK/out" \
  --json "$WORK/result.json" --summary-timeout 60 >"$WORK/producer.out" 2>&1 || status=$?
cat "$WORK/producer.out"
((status == 0)) || fail "cfd-producer exited with status $status"
[[ -s $WORK/producer.stats.json ]] || fail "the producer wrote no LongPipe statistics"

# Summaries (complete and in order, or gaps dropped by policy only) and LongPipe's own counts.
"$HERE/check_result.py" "$WORK/result.json" $FRAMES $CONSUMERS --host $SITE_B "${drops[@]}" \
  --longpipe-stats "$WORK/producer.stats.json" || fail "the run did not deliver as configured (policy $POLICY)"
if [[ $POLICY == isolation ]]; then
  "$HERE/check_isolation.py" "$WORK/result.json" $FRAMES --fast 0 --slow 1 \
    --longpipe-stats "$WORK/producer.stats.json" ||
    fail "the slow consumer was not isolated from the fast one"
fi
if [[ $POLICY == live ]]; then
  "$HERE/check_live.py" "$WORK/result.json" "$WORK/out" --slow 1 || fail "a live display did not show the newest frames"
fi

# Every frame a consumer received is a PNG that decodes and shows the field.
check_consumers_pngs "$BIN" "$WORK/out" "$WORK/result.json" $CONSUMERS
echo "PNGs: one per frame shown and a contact sheet per consumer, all decode and show the field"
echo PASS
