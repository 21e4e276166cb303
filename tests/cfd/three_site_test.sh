#!/usr/bin/env bash
# The CFD demo's three-site run (apps/cfd-demo/three-sites) on the ctest fixture's sites (netem/wan
# --sites, instance $LP_WAN_INSTANCE, short delays): cfd-producer on s1-gw under
# LD_PRELOAD=liblongpipe.so with LONGPIPE_WINDOW_FULL=drop-oldest and a window of 32, consumer 0 on
# s2-gw (155 Mbit/s), consumer 1 on s3-gw behind the thin 2 Mbit/s line. 300 frames of 32 KB at
# 8 solver steps per frame (about 200 frames/s): far more than the thin line's ~7.6 frames/s, and
# slow enough that the fast consumer's window of 32 frames covers a stall of about 150 ms on a
# loaded machine (rendering a PNG, a descheduled process) without a frame dropped by policy.
#
# Asserted (behaviour only; check_three_sites.py, check_isolation.py): both consumers' frames whole,
# once and in order; the fast consumer got every frame; the slow one missed some, exactly what its
# session dropped by policy, and the fast one's session dropped none; the producer's last send
# completed while the slow consumer was further behind than a producer waiting for it could be.
# Usage: three_site_test.sh LIBLONGPIPE   (LONGPIPE_BUILD_DIR: the build tree)
set -euo pipefail

LIBRARY=${1:?usage: $0 LIBLONGPIPE}
HERE=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=common.sh
source "$HERE/common.sh"
: "${LP_WAN_INSTANCE:?run through ctest (the fixture sets LP_WAN_INSTANCE), or set it to sites that are up}"
[[ -f $LIBRARY ]] || fail "no LongPipe library at $LIBRARY"

readonly FRAMES=300 WINDOW=32 RUN_SECONDS=90
WORK=$(mktemp -d /tmp/cfd-three-site-test.XXXXXX)
cleanup() {
  local status=$?
  # three-sites takes its virtual machine down itself, also on error; this is for a kill from outside.
  "$ROOT/apps/pvm-sites/pvm-sites" down >/dev/null 2>&1 || true
  remove_work_unless_failed "$status"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The fixture's link: three-sites brings up and tears down only the PVM virtual machine.
status=0
timeout --kill-after=10 "$RUN_SECONDS" "$ROOT/apps/cfd-demo/three-sites" --link-up --instance "$LP_WAN_INSTANCE" --library "$LIBRARY" \
  --sites lan,geo:delay=10,thin:delay=10 --frames $FRAMES --window $WINDOW --steps-per-frame 8 \
  --warmup-steps 200 --render-every 50 --timeout $((RUN_SECONDS - 20)) --out "$WORK" || status=$?
((status == 0)) || fail "three-sites exited with status $status"

"$HERE/check_three_sites.py" "$WORK" $FRAMES $WINDOW || fail "the three-site run did not behave as configured"
"$HERE/check_isolation.py" "$WORK/result.json" $FRAMES --fast 0 --slow 1 --longpipe-stats "$WORK/producer.stats.json" ||
  fail "the consumer behind the thin line was not isolated from the fast one"
echo PASS
