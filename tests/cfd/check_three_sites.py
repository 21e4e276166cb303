#!/usr/bin/python3
"""Checks a three-site CFD run (apps/cfd-demo/three-sites): producer at site 1, fast consumer 0 at
site 2, slow consumer 1 behind the thin line at site 3, LongPipe with a drop policy.

Asserted (behaviour, no timing):
  - each consumer ran on its own site's host; neither was lost;
  - every frame either consumer got is whole (no corrupt frame: the CRC checks), once and in order;
  - the fast consumer got every frame (its policy allows no drop: its session never fills);
  - the slow consumer missed some, and its gaps are exactly what its LongPipe session dropped by
    policy; the fast consumer's session dropped nothing (check_isolation.py does this part);
  - the producer did not wait for the slow consumer: when the producer stamped its last frame (just
    before sending it, so every earlier send had completed; the stamp is read from the fast
    consumer's frames.csv, and all hosts share one clock), the slow consumer was further behind than
    a waiting producer could ever be: more than 1.5 x (3 windows + 32 frames), the most a blocked
    producer can be ahead (its queue and in-flight window, the consumer engine's window, and the
    frames its PVM front end and libpvm3 hold). A count of frames, not a speed.

Usage: check_three_sites.py OUT_DIR FRAMES WINDOW
"""
import csv
import json
import os
import sys

HOSTS = {0: "s2-gw", 1: "s3-gw"}
CONSUMER_SIDE_FRAMES = 32


def arrivals(out, consumer):
    with open(os.path.join(out, "frames", f"consumer-{consumer}", "frames.csv")) as f:
        return [(int(r["frame"]), int(r["sent_ns"]), int(r["received_ns"])) for r in csv.DictReader(f)]


def main():
    out, frames, window = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    result = json.load(open(os.path.join(out, "result.json")))
    problems = []
    if result["producer"]["frames"] != frames:
        problems.append(f"the producer sent {result['producer']['frames']} frames, expected {frames}")
    consumers = {c["consumer"]: c for c in result["consumers"]}
    for index, host in HOSTS.items():
        c = consumers.get(index)
        if c is None or c["host"] != host:
            problems.append(f"consumer {index} ran on {c['host'] if c else 'nowhere'}, expected {host}")
            continue
        for key in ("duplicates", "out_of_order", "corrupt"):
            if c[key] != 0:
                problems.append(f"consumer {index}: {key} = {c[key]}")
        if not c["in_order"] or not c["delivered_as_configured"]:
            problems.append(f"consumer {index}: in order {c['in_order']}, as configured {c['delivered_as_configured']}")
        numbers = [frame for frame, _, _ in arrivals(out, index)]
        if numbers != sorted(set(numbers)) or len(numbers) != c["frames_received"]:
            problems.append(f"consumer {index}: frames.csv is not its {c['frames_received']} frames once, in order")
    if not problems:
        fast = arrivals(out, 0)
        last_stamp = [sent for frame, sent, _ in fast if frame == frames - 1][0]
        slow_then = sum(1 for _, _, at in arrivals(out, 1) if at <= last_stamp)
        behind = frames - slow_then
        blocked_bound = 3 * window + CONSUMER_SIDE_FRAMES
        if behind <= 1.5 * blocked_bound:
            problems.append(f"when the producer sent its last frame the slow consumer had {slow_then} of {frames} "
                            f"frames ({behind} behind): a producer waiting for it could be {blocked_bound} ahead, "
                            "so it may have waited")
        else:
            print(f"producer: its last frame went out when the slow consumer had {slow_then} of {frames} frames "
                  f"({behind} behind; a waiting producer is at most {blocked_bound} ahead)")
    if problems:
        print("FAIL: " + "\n      ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
