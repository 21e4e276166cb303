#!/usr/bin/env bash
# Two-site PVM on the emulated link: pvm-sites brings up a virtual machine with site-a and site-b,
# a task spawned on site-b (found by bare name through ep=) exchanges messages with the master on
# site-a over PVM's default route and PvmRouteDirect, and after `down` nothing of it is left.
# With LIBLONGPIPE, lp-bench also runs under LD_PRELOAD (the benchmark's LongPipe route): every
# message must still arrive, in order (the worker checks), and be acknowledged, and the master's
# LongPipe statistics must show a session to site-b that carried them.
# Usage: two_site_pvm_test.sh PVM-SITES LP-BENCH [LIBLONGPIPE]   (run by ctest with LP_WAN_INSTANCE set)
set -euo pipefail

PVM_SITES=$1
LP_BENCH=$2
LIBLONGPIPE=${3:-}
STATE=/tmp/lp-pvm-sites-${LP_WAN_INSTANCE:?run by ctest through longpipe_wan_test}

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"
# In an ASan build lp-bench itself is instrumented: leaks inside libpvm3 (wait_new) are not
# LongPipe's to judge, in the master or in the tasks it spawns.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} PVM_EXPORT=${PVM_EXPORT:+$PVM_EXPORT:}ASAN_OPTIONS
# The library (and in an ASan build its runtime first) in the master and its tasks.
PRELOADED=$(cd "$(dirname "$0")/.." && pwd)/sites_exec_preloaded.sh
trap '"$PVM_SITES" down || true' EXIT

# The plain build runs every combination of route, acknowledgement and encoding below; a sanitizer
# build (its runtime linked into the library) each value of each option once, which reaches the
# same code of the library and of lp-bench in half the time.
combinations() {  # combinations FIRST-VALUES SECOND-VALUES: "first second" lines
  local -a first=($1) second=($2)
  local i j
  if [[ -n $SANITIZED ]]; then
    for ((i = 0; i < ${#first[@]} || i < ${#second[@]}; i++)); do
      echo "${first[i % ${#first[@]}]} ${second[i % ${#second[@]}]}"
    done
  else
    for i in "${first[@]}"; do for j in "${second[@]}"; do echo "$i $j"; done; done
  fi
}
SANITIZED=""
if [[ -n $LIBLONGPIPE ]] && ldd "$LIBLONGPIPE" | grep -qE 'lib(a|t)san'; then SANITIZED=yes; fi

"$PVM_SITES" up --ep "$(dirname "$LP_BENCH")"
conf=$("$PVM_SITES" conf)
grep -qE '^ *site-a +[0-9a-f]+ +LINUX64' <<<"$conf" || fail "site-a missing from conf: $conf"
grep -qE '^ *site-b +[0-9a-f]+ +LINUX64' <<<"$conf" || fail "site-b missing from conf: $conf"
"$PVM_SITES" status

# lp-bench fails unless the worker reports host site-b and every batch is acknowledged completely,
# in order (sequence marks checked by the worker).
while read -r route ack <&3; do
  out=$("$PVM_SITES" exec a "$LP_BENCH" --worker-exe "$(basename "$LP_BENCH")" \
    --route "$route" --ack "$ack" --count 20 --size 5000 --batches 2 2>&1) ||
    fail "lp-bench --route $route --ack $ack failed: $out"
  grep -q 'worker t[0-9a-f]* runs on site-b' <<<"$out" || fail "worker not on site-b: $out"
  lines=$(grep -cE "^[12],5000,20,$ack,$route,default," <<<"$out" || true)
  [[ $lines == 2 ]] || fail "expected 2 batch lines for route $route ack $ack, got $lines: $out"
done 3< <(combinations "default direct" "each last wait")
for encoding in raw inplace; do
  out=$("$PVM_SITES" exec a "$LP_BENCH" --encoding "$encoding" --count 10 --size 70000 2>&1) ||
    fail "lp-bench --encoding $encoding failed: $out"
  grep -qE "^1,70000,10,last,default,$encoding," <<<"$out" || fail "no batch line for encoding $encoding: $out"
done

# longpipe_carried STATS-FILE MESSAGES BYTES: the master's LongPipe statistics show that a session to
# site-b sent at least MESSAGES messages and BYTES bytes and did not fail. Without this the run
# could pass on PVM's own route with LongPipe loaded but not carrying anything.
longpipe_carried() {
  /usr/bin/python3 - "$@" <<'PY'
import json, sys
path, messages, body_bytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    stats = json.load(open(path))
except (OSError, ValueError) as e:
    sys.exit(f"no LongPipe statistics from the master ({path}: {e})")
sessions = [s for s in stats["sessions"] if s["peer"].startswith("site-b:")]
sent = sum(s["messages_sent"] for s in sessions)
sent_bytes = sum(s["bytes_sent"] for s in sessions)
failed = [s["failure"] for s in sessions if s["failure"] is not None]
if not sessions or sent < messages or sent_bytes < body_bytes or failed:
    sys.exit(f"LongPipe did not carry the traffic: {len(sessions)} session(s) to site-b sent {sent} messages, "
             f"{sent_bytes} bytes (expected >= {messages} and >= {body_bytes}), failures {failed}")
print(f"LongPipe carried it: {sent} messages, {sent_bytes} bytes to site-b")
PY
}

if [[ -n $LIBLONGPIPE ]]; then
  stats=$(mktemp /tmp/lp-bench-stats.XXXXXX)
  trap '"$PVM_SITES" down || true; rm -f "$stats"' EXIT
  while read -r ack encoding <&3; do
    # LONGPIPE_STATS set inside (through env) is the master's alone: pvm-sites exports only the
    # LONGPIPE_* variables of its own environment to spawned tasks.
    rm -f "$stats"
    out=$("$PRELOADED" "$PVM_SITES" a "$LIBLONGPIPE" env LONGPIPE_STATS="$stats" "$LP_BENCH" --ack "$ack" \
      --encoding "$encoding" --count 50 --size 3000 --batches 2 2>&1) ||
      fail "lp-bench under LongPipe (--ack $ack, $encoding) failed: $out"
    lines=$(grep -cE "^[12],3000,50,$ack,default,$encoding," <<<"$out" || true)
    [[ $lines == 2 ]] || fail "under LongPipe, --ack $ack $encoding: expected 2 batch lines, got $lines: $out"
    carried=$(longpipe_carried "$stats" 100 $((100 * 3000)) 2>&1) || fail "--ack $ack $encoding: $carried"
    echo "--ack $ack $encoding: $carried"
  done 3< <(combinations "each last wait" "default raw inplace")
  rm -f "$stats"
  trap '"$PVM_SITES" down || true' EXIT
fi

# A spawn that cannot work is reported, not hung on.
if out=$("$PVM_SITES" exec a "$LP_BENCH" --worker-host no-such-host --count 1 2>&1); then
  fail "lp-bench with an unknown worker host succeeded: $out"
fi
grep -q 'No such host' <<<"$out" || fail "unclear error for an unknown host: $out"

pids=$("$PVM_SITES" status | sed -n 's/.*processes: //p')
[[ -n $pids ]] || fail "status lists no processes while up"
"$PVM_SITES" down
trap - EXIT
if "$PVM_SITES" status; then fail "status says up after down"; fi
for pid in $pids; do
  if [[ -e /proc/$pid ]] && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]; then
    fail "process $pid ($(cat "/proc/$pid/cmdline" | tr '\0' ' ')) still alive after down"
  fi
done
[[ ! -e $STATE ]] || fail "state directory $STATE left behind"
echo "PASS: two-site PVM up, site-a <-> site-b messages on both routes, all gone after down"
