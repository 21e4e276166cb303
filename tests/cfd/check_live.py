#!/usr/bin/python3
"""Checks the consumers' live displays after a cfd-producer --display live run: each consumer's
receive path took every frame it received (check_result.py checks which), and its display

  - showed a frame or counted it as skipped, never both, never neither (shown + skipped = received);
  - showed frames in increasing order of frame number: nothing older after something newer;
  - showed the last frame it received (the newest is what a live display ends on);
  - (--slow I) skipped frames at consumer I, whose display is slower than the stream: it shows the
    newest frame instead of working through a backlog.

Reads RESULT.json (the producer's --json) and each consumer's frames.csv in OUT/consumer-<i>.
Usage: check_live.py RESULT.json OUT [--slow I]
"""
import argparse
import csv
import json
import os
import sys


def check_consumer(c, out, problems):
    name = f"consumer {c['consumer']}"
    if c["display"] != "live":
        problems.append(f"{name}: display {c['display']}, expected live")
    if c["pngs_written"] + c["frames_skipped"] != c["frames_received"]:
        problems.append(f"{name}: {c['pngs_written']} shown + {c['frames_skipped']} skipped != {c['frames_received']} received")
    rows = list(csv.DictReader(open(os.path.join(out, f"consumer-{c['consumer']}", "frames.csv"))))
    if len(rows) != c["frames_received"]:
        problems.append(f"{name}: frames.csv has {len(rows)} rows, {c['frames_received']} frames received")
    shown = sorted((int(r["sent_ns"]) + float(r["shown_latency_ms"]) * 1e6, int(r["frame"]))
                   for r in rows if r["shown_latency_ms"])
    order = [frame for _, frame in shown]
    if order != sorted(order) or len(set(order)) != len(order):
        problems.append(f"{name}: frames shown out of order: {order}")
    if len(order) != c["pngs_written"]:
        problems.append(f"{name}: frames.csv shows {len(order)} frames, the summary {c['pngs_written']}")
    if rows and (not order or order[-1] != int(rows[-1]["frame"])):
        problems.append(f"{name}: the last frame received ({rows[-1]['frame']}) was not shown last (shown: {order[-3:]})")
    return order


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("out")
    parser.add_argument("--slow", type=int, action="append", default=[])
    args = parser.parse_args()
    problems = []
    for c in json.load(open(args.result))["consumers"]:
        order = check_consumer(c, args.out, problems)
        if c["consumer"] in args.slow and c["frames_skipped"] == 0:
            problems.append(f"consumer {c['consumer']}: a display slower than the stream skipped no frame")
        print(f"consumer {c['consumer']}: {c['frames_received']} received, {c['pngs_written']} shown "
              f"(in increasing order, ending on frame {order[-1] if order else None}), {c['frames_skipped']} skipped")
    if problems:
        print("FAIL: " + "\n      ".join(problems), file=sys.stderr)
        return 1
    print("live displays: every frame shown or counted skipped, in order, the newest last")
    return 0


if __name__ == "__main__":
    sys.exit(main())
