#!/usr/bin/env bash
# collectives_test.sh DRIVER: apps/bench/collectives (./longpipe bench --collectives) across the
# ctest fixture's link (LP_WAN_INSTANCE; the driver brings it up again at 25 ms and takes it down),
# 2 ranks per site, round-robin, a few small points under Open MPI alone and under LongPipe.
# Checks behaviour, not speed: every point measured on both paths with correct results, the CSV,
# table and plot written, and LongPipe's statistics show the site path for what the program calls.
set -euo pipefail
DRIVER=${1:?usage: collectives_test.sh apps/bench/collectives}
OUT=$(mktemp -d /tmp/lp-bench-collectives.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
readonly POINTS=barrier:0,bcast:1024,allreduce:64,gather:256,alltoall:256

"$DRIVER" --delay 25 --ranks-per-site 2 --placements round-robin --calls 2 --points "$POINTS" --out "$OUT"

python3 - "$OUT" "$POINTS" <<'PY'
import csv, json, os, sys
out, points = sys.argv[1], sys.argv[2].split(",")
rows = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
for path in ("openmpi", "longpipe"):
    for point in points:
        operation, size = point.split(":")
        found = [r for r in rows if r["path"] == path and r["operation"] == operation and r["bytes"] == size]
        if len(found) != 1:
            sys.exit(f"FAIL: {path} {point}: {len(found)} rows in raw.csv")
        if found[0]["check"] != "ok":
            sys.exit(f"FAIL: {path} {point}: the collective's result was wrong")
        if not float(found[0]["limit_ms"]) >= 25.0:
            sys.exit(f"FAIL: {path} {point}: limit {found[0]['limit_ms']} below the one-way delay")
summary = list(csv.DictReader(open(os.path.join(out, "summary.csv"))))
if len(summary) != len(points):
    sys.exit(f"FAIL: summary.csv has {len(summary)} rows, expected {len(points)}")
for name in ("table.md", "collectives-round-robin.png"):
    if os.path.getsize(os.path.join(out, name)) == 0:
        sys.exit(f"FAIL: {name} is empty")
taken = json.load(open(os.path.join(out, "meta.json")))["longpipe_paths_rank0"]["round-robin"]
for name in ("MPI_Barrier", "MPI_Bcast", "MPI_Allreduce", "MPI_Gather", "MPI_Alltoall"):
    if taken.get(name, {}).get("site", 0) < 1:
        sys.exit(f"FAIL: {name} did not take the site path under LongPipe: {taken}")
print(f"PASS: {len(rows)} measurements, site path taken: {sorted(taken)}")
PY
