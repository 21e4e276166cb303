#!/usr/bin/python3
"""Checks cfd-producer's --json result: the run sent FRAMES frames and every consumer received
each of them once, complete and in order, with a PNG per frame.

Usage: check_result.py RESULT.json FRAMES CONSUMERS [--host HOST]
  --host HOST   every consumer must have run on HOST (e.g. site-b across the emulated link)
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("frames", type=int)
    parser.add_argument("consumers", type=int)
    parser.add_argument("--host")
    args = parser.parse_args()

    result = json.load(open(args.result))
    problems = []
    if result["producer"]["frames"] != args.frames:
        problems.append(f"producer sent {result['producer']['frames']} frames, expected {args.frames}")
    consumers = result["consumers"]
    if len(consumers) != args.consumers:
        problems.append(f"{len(consumers)} consumer summaries, expected {args.consumers}")
    for c in consumers:
        name = f"consumer {c['consumer']}"
        if c["host"] == "lost":
            problems.append(f"{name} was lost")
            continue
        if args.host and c["host"] != args.host:
            problems.append(f"{name} ran on {c['host']}, expected {args.host}")
        expected = {"frames_sent": args.frames, "frames_received": args.frames, "pngs_written": args.frames,
                    "missing": 0, "duplicates": 0, "out_of_order": 0, "corrupt": 0,
                    "in_order": True, "complete": True}
        for key, want in expected.items():
            if c[key] != want:
                problems.append(f"{name}: {key} = {c[key]}, expected {want}")
        if c["receive_latency_median_ms"] < 0:
            problems.append(f"{name}: negative latency {c['receive_latency_median_ms']} ms")
    if problems:
        print("FAIL: " + "\n      ".join(problems), file=sys.stderr)
        return 1
    print(f"summaries: {args.frames} frames complete and in order at {len(consumers)} consumer(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
