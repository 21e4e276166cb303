#!/usr/bin/env bash
# The MPI benchmark on a short link: lp-mpi-bench (a plain MPI program) runs across the two sites
# through mpi-sites in every ack and send mode, delivering every message (it checks sequence marks and
# acknowledgements itself), and under LongPipe both ways at once and with a message above 64 MiB
# (1 KiB elements); bad options are clear errors; then the driver (apps/bench/run --mpi) runs every
# MPI route present on this build with few messages, and its CSV files, table and plots must have
# the right shape, also with --send bidirectional. Nothing here asserts a speed.
# Usage: two_site_mpi_test.sh BENCH-RUN MPI-SITES LP-MPI-BENCH LIBLONGPIPE   (ctest sets LP_WAN_INSTANCE)
set -euo pipefail

RUN=$1
MPI_SITES=$2
LP_MPI_BENCH=$3
LIBLONGPIPE=${4:-}  # empty when the build has no MPI front end
: "${LP_WAN_INSTANCE:?run by ctest through longpipe_wan_test}"
OUT=$(mktemp -d /tmp/lp-bench-mpi-test.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# shellcheck source=../lib/itest_common.sh
source "$(dirname "$0")/../lib/itest_common.sh"

# lp-mpi-bench itself, on the fixture's link.
# check_run WHAT SIZE COUNT ACK SEND BATCHES OUTPUT: the batches' CSV lines and the placement line.
check_run() {
  local what=$1 size=$2 count=$3 ack=$4 send=$5 batches=$6 out=$7
  grep -qx 'batch,size_bytes,count,ack,send,fresh_job,total_s,per_message_s' <<<"$out" || fail "$what: no CSV header: $out"
  for ((batch = 1; batch <= batches; batch++)); do
    grep -qE "^$batch,$size,$count,$ack,$send,$(((batch == 1) ? 1 : 0)),[0-9.]+,[0-9.]+$" <<<"$out" ||
      fail "$what: no line for batch $batch: $out"
  done
  grep -q 'lp-mpi-bench: rank 0 on site-a, rank 1 on site-b' <<<"$out" || fail "$what: ranks not on both sites: $out"
}
# (--ack each --send blocking, the driver's own mode, runs below in the driver's jobs: their batch
# lines, warm-up flags and placement line are checked there.)
for mode in last,blocking wait,blocking each,nonblocking; do
  ack=${mode%,*} send=${mode#*,}
  out=$("$MPI_SITES" --timeout 120 "$LP_MPI_BENCH" --ack "$ack" --send "$send" --count 20 --size 70000 \
    --batches 2 2>&1) || fail "lp-mpi-bench --ack $ack --send $send failed: $out"
  check_run "--ack $ack --send $send" 70000 20 "$ack" "$send" 2 "$out"
done
# Both ways at once, under Open MPI alone and under LongPipe; each rank checks every message it gets.
preloads=("")
[[ -n $LIBLONGPIPE ]] && preloads+=("$LIBLONGPIPE")
for preload in "${preloads[@]}"; do
  route=${preload:+LongPipe}
  args=(--timeout 180 ${preload:+--preload "$preload"})
  out=$("$MPI_SITES" "${args[@]}" "$LP_MPI_BENCH" --send bidirectional --count 16 --size 256K --batches 2 2>&1) ||
    fail "lp-mpi-bench --send bidirectional ${route:-Open MPI} failed: $out"
  check_run "--send bidirectional ${route:-Open MPI}" 262144 16 none bidirectional 2 "$out"
done
# One message above 64 MiB (1 KiB elements): under LongPipe when the build has it (it carries the
# message in segments), else under Open MPI alone.
args=(--timeout 180 ${LIBLONGPIPE:+--preload "$LIBLONGPIPE"})
out=$("$MPI_SITES" "${args[@]}" "$LP_MPI_BENCH" --count 1 --size 65M --batches 1 2>&1) ||
  fail "lp-mpi-bench --size 65M failed: $out"
check_run "--size 65M" 68157440 1 each blocking 1 "$out"
if out=$("$LP_MPI_BENCH" --size 65M+1 2>&1); then fail "a size that is not a number was accepted"; fi
if out=$("$LP_MPI_BENCH" --size 68157441 --count 1 2>&1) || ! grep -q 'must be a multiple of 1024' <<<"$out"; then
  fail "a size above 64M that is not a multiple of 1 KiB: $out"
fi
if out=$("$LP_MPI_BENCH" --size 1G --count 3 --send bidirectional 2>&1) || ! grep -q 'MiB of buffers per rank' <<<"$out"; then
  fail "buffers above the limit: $out"
fi
if out=$("$LP_MPI_BENCH" --ack sometimes 2>&1); then fail "a bad --ack was accepted"; fi
grep -qF "bad value 'sometimes' for --ack (accepted: each, last, wait)" <<<"$out" || fail "unclear error: $out"
if out=$("$MPI_SITES" -n 2 --timeout 60 "$LP_MPI_BENCH" --count 1 2>&1); then fail "four ranks were accepted"; fi
grep -q 'needs exactly 2 ranks' <<<"$out" || fail "unclear error for four ranks: $out"

# The driver: every MPI route present, two sizes (one above Open MPI's 64 KiB eager limit).
"$RUN" --mpi --profile geo --delay 5 --instance "$LP_WAN_INSTANCE" --sizes 1K,80K --count 10 --batches 3 \
  --out "$OUT" >"$OUT/stdout" 2>"$OUT/stderr" || fail "the driver failed: $(cat "$OUT/stderr")"
routes="mpi-default mpi-tuned"
if grep -q 'LongPipe (MPI) route skipped' "$OUT/notes.csv"; then
  echo "note: $(grep -o 'LongPipe (MPI) route skipped[^"]*' "$OUT/notes.csv")"
else
  routes+=" mpi-longpipe"
fi
for file in raw.csv summary.csv notes.csv meta.csv table.md aggregate-latency.png latency-throughput.png throughput.png; do
  [[ -s $OUT/$file ]] || fail "the driver wrote no $file"
done
head -n1 "$OUT/raw.csv" | tr -d '\r' | grep -qx 'route,size_bytes,count,ack,encoding,batch,total_s,per_message_s,warmup,outlier' ||
  fail "raw.csv header: $(head -n1 "$OUT/raw.csv")"
grep -q ',first_t_s' <(head -n1 "$OUT/summary.csv") || fail "summary.csv lacks first_t_s: $(head -n1 "$OUT/summary.csv")"
python3 - "$OUT" $routes <<'PY' || fail "the driver's results have the wrong shape (above)"
import csv, os, sys
out, routes = sys.argv[1], sys.argv[2:]
raw = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
summary = {(r["route"], int(r["size_bytes"])): r for r in csv.DictReader(open(os.path.join(out, "summary.csv")))}
problems = []
for route in routes:
    for size in (1024, 81920):
        rows = [r for r in raw if r["route"] == route and int(r["size_bytes"]) == size]
        if [int(r["batch"]) for r in rows] != [1, 2, 3]:
            problems.append(f"{route} {size}: batches {[r['batch'] for r in rows]}")
            continue
        if [r["warmup"] for r in rows] != ["1", "0", "0"]:
            problems.append(f"{route} {size}: warm-up flags {[r['warmup'] for r in rows]}")
        for r in rows:
            total, per_message = float(r["total_s"]), float(r["per_message_s"])
            if not (total > 0 and abs(per_message * 10 - total) <= 1e-6 * total + 1e-9):
                problems.append(f"{route} {size} batch {r['batch']}: T {total}, t {per_message}")
        s = summary.get((route, size))
        if not s or s["status"] != "ok" or s["measured"] != "2" or not s["median_t_s"] or not s["floor_t_s"]:
            problems.append(f"{route} {size}: summary {s}")
        elif abs(float(s["first_t_s"]) - float(rows[0]["per_message_s"])) > 1e-5 * float(s["first_t_s"]):
            problems.append(f"{route} {size}: first_t_s {s['first_t_s']} is not batch 1's t")
extra = {r["route"] for r in raw} - set(routes)
if extra:
    problems.append(f"unexpected routes {extra}")
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
for route in "Open MPI TCP default" "Open MPI TCP tuned"; do
  grep -q "| $route t (ms) |" "$OUT/table.md" || fail "table.md lacks the column '$route': $(cat "$OUT/table.md")"
done
grep -qE '^\| 80 KiB \| [0-9.]+ \| .*; first [0-9.]+, x[0-9.]+' "$OUT/table.md" || fail "table.md lacks first batches: $(cat "$OUT/table.md")"
grep -q 'geo with delay 5 ms' "$OUT/table.md" || fail "table.md does not say the delay: $(head -n1 "$OUT/table.md")"
# The driver both ways at once (one route and size: the shape is the same for every route); the
# floor is half a round trip per window.
BIDI=$OUT/bidirectional
"$RUN" --routes mpi-tuned --send bidirectional --profile geo --delay 5 --instance "$LP_WAN_INSTANCE" --sizes 64K --count 8 \
  --batches 2 --no-plots --out "$BIDI" >"$BIDI.stdout" 2>"$BIDI.stderr" ||
  fail "the driver (--send bidirectional) failed: $(cat "$BIDI.stderr")"
python3 - "$BIDI" mpi-tuned <<'PY' || fail "the bidirectional results have the wrong shape (above)"
import csv, os, sys
out, routes = sys.argv[1], sys.argv[2:]
meta = list(csv.DictReader(open(os.path.join(out, "meta.csv"))))[0]
summary = {r["route"]: r for r in csv.DictReader(open(os.path.join(out, "summary.csv")))}
rtt, rate = float(meta["rtt_s"]), float(meta["rate_bit_s"])
floor = rtt / 2 / 8 + 65536 * 8 / rate
problems = [] if (meta["send"], meta["ack"]) == ("bidirectional", "none") else [f"meta {meta}"]
for route in routes:
    s = summary.get(route)
    if not s or s["status"] != "ok" or s["measured"] != "1":
        problems.append(f"{route}: summary {s}")
    elif abs(float(s["floor_t_s"]) - floor) > 1e-3 * floor:
        problems.append(f"{route}: floor {s['floor_t_s']}, expected {floor:.6g} (half a round trip per window)")
print("\n".join(problems))
sys.exit(1 if problems else 0)
PY
grep -q 'both ways at once' "$BIDI/table.md" || fail "table.md does not say both ways: $(head -n1 "$BIDI/table.md")"
echo "PASS: MPI benchmark (routes: $routes)"
