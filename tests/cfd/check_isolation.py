#!/usr/bin/python3
"""Checks that a slow consumer was isolated from a fast one (after check_result.py --allow-drops has
checked order, duplicates, corruption, and that each consumer's gaps equal one session's
dropped_by_policy, as a multiset over the sessions).

Here: the fast consumer received every frame (no gap, so its session dropped nothing), the slow one
missed some (so the drops, which check_result.py matched to sessions, were its session's alone).

Usage: check_isolation.py RESULT.json FRAMES --fast I --slow J
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("frames", type=int)
    parser.add_argument("--fast", type=int, required=True, help="index of the fast consumer")
    parser.add_argument("--slow", type=int, required=True, help="index of the slow consumer")
    args = parser.parse_args()

    consumers = {c["consumer"]: c for c in json.load(open(args.result))["consumers"]}
    fast, slow = consumers[args.fast], consumers[args.slow]
    problems = []
    if fast["frames_received"] != args.frames or fast["missing"] != 0 or not fast["in_order"]:
        problems.append(f"fast consumer: {fast['frames_received']}/{args.frames} frames, {fast['missing']} missing, "
                        f"in order {fast['in_order']}: expected every frame in order")
    if slow["missing"] == 0 or slow["dropped_by_policy"] != slow["missing"] or not slow["in_order"]:
        problems.append(f"slow consumer: {slow['frames_received']}/{args.frames} frames, {slow['missing']} missing, "
                        f"{slow['dropped_by_policy']} dropped by policy, in order {slow['in_order']}: expected an "
                        "in-order subset whose gaps are all dropped by policy")
    if problems:
        print("FAIL: " + "\n      ".join(problems), file=sys.stderr)
        return 1
    print(f"isolation: fast consumer {fast['frames_received']}/{args.frames} frames, slow consumer "
          f"{slow['frames_received']}/{args.frames} ({slow['dropped_by_policy']} dropped by its session's policy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
