#!/usr/bin/env bash
# cfd-producer on site-a streams frames to two cfd-consumers it spawns on site-b, across the
# emulated link of the ctest fixture (netem/wan, instance $LP_WAN_INSTANCE), with the unmodified
# PVM binaries under LD_PRELOAD=liblongpipe.so (apps/pvm-sites exec --preload: the consumers
# inherit it through PVM_EXPORT). Checks: every frame arrives once, complete and in order, at both
# consumers (one of them slowed); their PNGs decode and are not blank; and LongPipe, not the
# pvmds, carried the frames (the producer's LONGPIPE_STATS: a session to each consumer on site-b
# with at least FRAMES messages sent, none dropped). Tears the virtual machine down, also on failure.
# Usage: two_site_longpipe_test.sh BIN_DIR LIBLONGPIPE
set -euo pipefail

BIN=${1:?usage: $0 BIN_DIR LIBLONGPIPE}
LIBRARY=${2:?usage: $0 BIN_DIR LIBLONGPIPE}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PVM_SITES=$ROOT/apps/pvm-sites/pvm-sites
# shellcheck source=common.sh
source "$HERE/common.sh"
: "${LP_WAN_INSTANCE:?run through ctest (the fixture sets LP_WAN_INSTANCE), or set it to a link that is up}"

# Frames, two consumers (the second slowed, so that its session holds a backlog), small grid.
readonly FRAMES=30 CONSUMERS=2 SITE_B=site-b
# The whole run takes ~10 s at 25 ms each way; the limit only stops a hang.
readonly RUN_SECONDS=90

WORK=$(mktemp -d /tmp/cfd-two-site-test.XXXXXX)
cleanup() {
  local status=$?
  "$PVM_SITES" down >/dev/null 2>&1 || echo "warning: pvm-sites down failed" >&2
  if ((status != 0)); then echo "(work files kept in $WORK)" >&2; else rm -rf "$WORK"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ -f $LIBRARY ]] || fail "no LongPipe library at $LIBRARY"
"$PVM_SITES" up >"$WORK/pvm-sites-up.log" 2>&1 || { cat "$WORK/pvm-sites-up.log"; fail "pvm-sites up failed"; }

# LONGPIPE_STATS is set after pvm-sites has built PVM_EXPORT (through env), so that it is the
# producer's alone: the consumers would otherwise inherit it and overwrite the file.
status=0
timeout "$RUN_SECONDS" "$PVM_SITES" exec a --preload "$LIBRARY" \
  env LONGPIPE_STATS="$WORK/producer.stats.json" \
  "$BIN/cfd-producer" --consumer-host site-b --consumers $CONSUMERS --slow-ms 0,20 --frames $FRAMES \
  --grid 128x64 --steps-per-frame 20 --warmup-steps 1000 --out "$WORK/out" --json "$WORK/result.json" \
  --summary-timeout 60 >"$WORK/producer.out" 2>&1 || status=$?
cat "$WORK/producer.out"
((status == 0)) || fail "cfd-producer exited with status $status"

"$HERE/check_result.py" "$WORK/result.json" $FRAMES $CONSUMERS --host site-b || fail "the consumers' summaries"
for ((i = 0; i < CONSUMERS; ++i)); do check_pngs "$BIN" "$WORK/out" $i $FRAMES; done
echo "PNGs: $FRAMES frames and a contact sheet per consumer, all decode and show the field"

# LongPipe carried the frames: one session per consumer task on site-b, each with every frame.
[[ -s $WORK/producer.stats.json ]] || fail "the producer wrote no LongPipe statistics"
/usr/bin/python3 - "$WORK/producer.stats.json" $FRAMES $CONSUMERS $SITE_B <<'PY' || fail "LongPipe statistics"
import json, sys
stats = json.load(open(sys.argv[1]))
frames, consumers, site_b = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
to_b = [s for s in stats["sessions"] if s["peer"].startswith(site_b + ":")]
carried = [s for s in to_b if s["messages_sent"] >= frames]
for s in to_b:
    print(f"LongPipe session to {s['peer']}: {s['messages_sent']} messages / {s['bytes_sent']} bytes sent, "
          f"{s['messages_received']} received, dropped by policy {s['dropped_by_policy']}")
assert len(carried) == consumers, f"expected {consumers} sessions to site-b with >= {frames} messages sent: {to_b}"
assert all(s["dropped_by_policy"] == 0 for s in to_b), "messages dropped under the default policy (block)"
assert all(s["failure"] is None for s in to_b), [s["failure"] for s in to_b]
PY
echo PASS
