#!/usr/bin/env bash
# sweep_test.sh DRIVER: apps/bench/sweep (./longpipe bench --sweep) across the ctest fixture's
# instance (LP_WAN_INSTANCE; the driver brings the link up again per point and takes it down), two
# short points (one with loss), small sizes, 2 batches, iperf3 and SRT (both modes) for 1 s. Checks
# behaviour, not speed: every point and field in the CSVs, positive floors, first and warm batches
# measured, the goodputs present (an SRT row per mode and point: bytes moved, checked by the driver
# against those sent; an SRT connection that moves nothing, as SRT's handshake may on the lossy point,
# is tried again by the driver), the table and both plots written, and nothing left running.
set -euo pipefail
DRIVER=${1:?usage: sweep_test.sh apps/bench/sweep}
OUT=$(mktemp -d /tmp/lp-bench-sweep.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
readonly POINTS=10/100,25/100/1
readonly FLOW_SECONDS=1   # each iperf3 and SRT flow's time limit

LONGPIPE_BANDWIDTH=1 "$DRIVER" --points "$POINTS" --sizes 1K,64K --count 20 --batches 2 --iperf-seconds "$FLOW_SECONDS" \
  --point-budget 60 --out "$OUT"

python3 - "$OUT" "$FLOW_SECONDS" <<'PY'
import csv, json, os, sys
out, flow_seconds = sys.argv[1], float(sys.argv[2])
points = {"10ms/100M": (10, 0), "25ms/100M/1%": (25, 1)}
summary = {r["point"]: r for r in csv.DictReader(open(os.path.join(out, "summary.csv")))}
if set(summary) != set(points):
    sys.exit(f"FAIL: summary.csv points {sorted(summary)}, expected {sorted(points)}")
for name, (delay, loss) in points.items():
    row = summary[name]
    if float(row["one_way_ms"]) != delay or float(row["loss_pct"]) != loss or float(row["rate_mbit"]) != 100:
        sys.exit(f"FAIL: {name}: path values {row}")
    if not float(row["measured_rtt_ms"]) >= 2 * delay:
        sys.exit(f"FAIL: {name}: measured RTT {row['measured_rtt_ms']} below the configured {2 * delay}")
    for label in ("1K", "64K"):
        floor = float(row[f"{label}_floor_ms"])
        if not floor > 0:
            sys.exit(f"FAIL: {name} {label}: floor {floor}")
        for key in ("first_ms", "first_x", "warm_ms", "warm_x"):
            if not float(row[f"{label}_{key}"]) > 0:
                sys.exit(f"FAIL: {name} {label}: {key} = {row[f'{label}_{key}']!r}")
        if row[f"{label}_warm_batches"] != "1":
            sys.exit(f"FAIL: {name} {label}: {row[f'{label}_warm_batches']} warm batches, expected 1")
    for key in ("longpipe_goodput_share", "cubic_goodput_share", "bbr_goodput_share", "srt_goodput_share",
                "srt_paced_goodput_share"):
        if not (row[key] and float(row[key]) > 0):
            sys.exit(f"FAIL: {name}: {key} = {row[key]!r}; the point's notes: {row['notes']}")
    for key in ("load_start", "load_end", "seconds"):
        float(row[key])
raw = list(csv.DictReader(open(os.path.join(out, "raw.csv"))))
for name in points:
    for size in ("1024", "65536"):
        kinds = sorted(r["kind"] for r in raw if r["point"] == name and r["tool"] == "lp-perf" and r["size_bytes"] == size)
        if kinds != ["cold", "warm"]:
            sys.exit(f"FAIL: {name} {size} B: batches {kinds} in raw.csv, expected cold and warm")
    ccs = sorted(r["congestion"] for r in raw if r["point"] == name and r["tool"] == "iperf3")
    if ccs != ["bbr", "cubic"]:
        sys.exit(f"FAIL: {name}: iperf3 rows {ccs}")
    srt = {r["congestion"]: r for r in raw if r["point"] == name and r["tool"] == "srt"}
    if sorted(srt) != ["file", "paced"]:
        sys.exit(f"FAIL: {name}: SRT rows {sorted(srt)}, expected file and paced")
    for mode, r in srt.items():
        if not (int(r["size_bytes"]) > 0 and float(r["seconds"]) > 0 and float(r["goodput_mbit"]) > 0
                and r["kind"] in ("complete", "stopped")):
            sys.exit(f"FAIL: {name}: SRT {mode} row {r}")
        # Time-limited like iperf3 -t: the data phase (flow_seconds) plus the handshake's round trips.
        if float(r["seconds"]) > flow_seconds + 2 * 2 * 25 / 1000 + 0.5 + 1:
            sys.exit(f"FAIL: {name}: SRT {mode} ran {r['seconds']} s, past its time limit")
meta = json.load(open(os.path.join(out, "meta.json")))
if "LONGPIPE_BANDWIDTH" not in meta["dropped_longpipe_variables"]:
    sys.exit(f"FAIL: LONGPIPE_BANDWIDTH was not dropped: {meta}")
table = open(os.path.join(out, "table.md")).read()
if "SRT file" not in table or "SRT paced" not in table:
    sys.exit("FAIL: table.md has no SRT columns")
for name in points:
    if f"| {name} |" not in table:
        sys.exit(f"FAIL: table.md has no row for {name}")
for plot in ("sweep-t-over-floor.png", "sweep-goodput.png"):
    if os.path.getsize(os.path.join(out, plot)) < 1000:
        sys.exit(f"FAIL: {plot} missing or empty")
print(f"PASS: {len(raw)} raw rows, {len(summary)} points")
PY

# The driver took its link down: no namespace of the instance is left.
if ip netns list | grep -q "lp-${LP_WAN_INSTANCE}-site-"; then
  echo "FAIL: the instance's namespaces are still there" >&2
  exit 1
fi
