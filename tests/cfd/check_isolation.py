#!/usr/bin/python3
"""Checks that a slow consumer was isolated from a fast one (after check_result.py --allow-drops has
checked order, duplicates, corruption, and that the consumers' gaps equal the sessions'
dropped_by_policy, as a multiset over the sessions).

Here: the fast consumer received every frame (no gap), the slow one missed some, and the producer's
engine (its LONGPIPE_STATS, not the consumers' own summaries) dropped exactly that many on one
session and nothing on the other: the drops were the slow consumer's session's alone.

Usage: check_isolation.py RESULT.json FRAMES --fast I --slow J --longpipe-stats FILE
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
    parser.add_argument("--longpipe-stats", required=True, help="the producer's LONGPIPE_STATS file")
    args = parser.parse_args()

    consumers = {c["consumer"]: c for c in json.load(open(args.result))["consumers"]}
    fast, slow = consumers[args.fast], consumers[args.slow]
    problems = []
    if fast["frames_received"] != args.frames or fast["missing"] != 0 or not fast["in_order"]:
        problems.append(f"fast consumer: {fast['frames_received']}/{args.frames} frames, {fast['missing']} missing, "
                        f"in order {fast['in_order']}: expected every frame in order")
    if slow["missing"] == 0 or not slow["in_order"]:
        problems.append(f"slow consumer: {slow['frames_received']}/{args.frames} frames, {slow['missing']} missing, "
                        f"in order {slow['in_order']}: expected an in-order subset with gaps")
    # The sender's engine: one session dropped exactly the slow consumer's gaps, the other none.
    engine_drops = sorted(s["dropped_by_policy"] for s in json.load(open(args.longpipe_stats))["sessions"]
                          if s["messages_sent"] > 0)
    if engine_drops != [0, slow["missing"]]:
        problems.append(f"the producer's engine dropped {engine_drops} messages per session: expected "
                        f"[0, {slow['missing']}] (nothing for the fast consumer, the slow one's gaps for it)")
    if problems:
        print("FAIL: " + "\n      ".join(problems), file=sys.stderr)
        return 1
    print(f"isolation: fast consumer {fast['frames_received']}/{args.frames} frames, slow consumer "
          f"{slow['frames_received']}/{args.frames} ({slow['missing']} dropped by its session's policy, as the "
          "producer's engine counted)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
