#!/usr/bin/env bash
# bench_test.sh DRIVER: apps/bench/gateway (./longpipe bench --gateway) across the ctest fixture's
# link (LP_WAN_INSTANCE; the driver brings it up again at 5 ms with its gateways, and takes both
# down), two small sizes, 10 messages. Checks the CSV's shape, not speed: one row per size and path,
# positive times, the floor at least the link's per-message share of one round trip.
set -euo pipefail
DRIVER=${1:?usage: bench_test.sh apps/bench/gateway}
OUT=$(mktemp -d /tmp/lp-bench-gateway-test.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
readonly SIZES=1024,65536 COUNT=10 DELAY_MS=5

"$DRIVER" --profile lan --delay $DELAY_MS --sizes $SIZES --count $COUNT --out "$OUT"

/usr/bin/python3 - "$OUT/results.csv" "$SIZES" "$COUNT" "$DELAY_MS" <<'PY'
import csv, sys
path, sizes, count, delay = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), float(sys.argv[4])
rows = list(csv.DictReader(open(path)))
expected = ["size", "path", "job", "count", "T_s", "t_ms", "rtt_ms", "link_rate_mbit", "floor_ms", "ratio"]
if list(rows[0].keys()) != expected:
    sys.exit(f"FAIL: columns {list(rows[0].keys())}, expected {expected}")
for size in sizes:
    for mode in ("direct", "gateway"):
        found = [r for r in rows if r["size"] == size and r["path"] == mode]
        if len(found) != 1:
            sys.exit(f"FAIL: {len(found)} rows for {mode} {size}")
        r = found[0]
        if int(r["count"]) != count or not float(r["T_s"]) > 0 or not float(r["t_ms"]) > 0:
            sys.exit(f"FAIL: implausible row {r}")
        if not float(r["floor_ms"]) >= 2 * delay / count:
            sys.exit(f"FAIL: floor {r['floor_ms']} ms below one round trip over {count} messages")
        if abs(float(r["ratio"]) - float(r["t_ms"]) / float(r["floor_ms"])) > 0.01 * float(r["ratio"]):
            sys.exit(f"FAIL: ratio is not t_ms / floor_ms in {r}")
print(f"PASS: {len(rows)} rows")
PY
