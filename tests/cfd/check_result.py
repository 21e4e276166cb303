#!/usr/bin/python3
"""Checks cfd-producer's --json result: the run sent FRAMES frames and every consumer received
each of them once, complete and in order, with a PNG per frame (a live display: a PNG per frame
shown, the others counted as skipped).

Usage: check_result.py RESULT.json FRAMES CONSUMERS [--host HOST] [--allow-drops] [--longpipe-stats FILE]
  --host HOST            every consumer ran on HOST (e.g. site-b across the emulated link)
  --allow-drops          the run used a LongPipe drop policy (LONGPIPE_WINDOW_FULL=drop-oldest or
                         keep-latest): gaps are allowed if the SENDER's engine counted them as dropped
                         by policy (needs --longpipe-stats: a consumer cannot vouch for its own gaps);
                         duplicates, reordering and corruption still fail, and some frame must have
                         been dropped (else the policy was not exercised)
  --longpipe-stats FILE  the producer's LONGPIPE_STATS: LongPipe carried the frames, one session per
                         consumer on HOST, no session failed; each session's messages sent cover every
                         frame, or (--allow-drops) its dropped_by_policy equals a consumer's gap count
"""
import argparse
import json
import sys


def check_consumers(result, args, problems):
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
        shown = c["frames_received"] - c["frames_skipped"] if c["display"] == "live" else c["frames_received"]
        expected = {"frames_sent": args.frames, "pngs_written": shown,
                    "duplicates": 0, "out_of_order": 0, "corrupt": 0, "in_order": True,
                    "delivered_as_configured": True}
        if args.allow_drops:
            # Its gaps are checked against the producer's engine (check_longpipe_stats), not here.
            expected["frames_received"] = args.frames - c["missing"]
        else:
            expected.update(frames_received=args.frames, missing=0, dropped_by_policy=0, complete=True)
        for key, want in expected.items():
            if c[key] != want:
                problems.append(f"{name}: {key} = {c[key]}, expected {want}")
        if c["receive_latency_median_ms"] < 0:
            problems.append(f"{name}: negative latency {c['receive_latency_median_ms']} ms")
    if args.allow_drops and not any(c["missing"] for c in consumers):
        problems.append("no frame was dropped: the drop policy was not exercised")
    return consumers


def check_longpipe_stats(path, consumers, args, problems):
    stats = json.load(open(path))
    sessions = [s for s in stats["sessions"] if s["peer"].startswith(f"{args.host}:")]
    for s in sessions:
        print(f"LongPipe session to {s['peer']}: {s['messages_sent']} messages / {s['bytes_sent']} bytes sent, "
              f"{s['messages_received']} received, dropped by policy {s['dropped_by_policy']}")
        if s["failure"] is not None:
            problems.append(f"session to {s['peer']} failed: {s['failure']}")
    if len(sessions) != args.consumers:
        problems.append(f"{len(sessions)} LongPipe sessions to {args.host}, expected one per consumer")
    if args.allow_drops:
        # The engine's own count of discarded messages must be exactly each consumer's gap count.
        dropped = sorted(s["dropped_by_policy"] for s in sessions)
        missing = sorted(c["missing"] for c in consumers)
        if dropped != missing:
            problems.append(f"sessions dropped {dropped} messages, consumers miss {missing} frames")
    else:
        for s in sessions:
            if s["messages_sent"] < args.frames or s["dropped_by_policy"] != 0:
                problems.append(f"session to {s['peer']} sent {s['messages_sent']} messages and dropped "
                                f"{s['dropped_by_policy']}: expected every one of {args.frames} frames, none dropped")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("result")
    parser.add_argument("frames", type=int)
    parser.add_argument("consumers", type=int)
    parser.add_argument("--host")
    parser.add_argument("--allow-drops", action="store_true")
    parser.add_argument("--longpipe-stats")
    args = parser.parse_args()
    if args.longpipe_stats and not args.host:
        parser.error("--longpipe-stats needs --host")
    if args.allow_drops and not args.longpipe_stats:
        parser.error("--allow-drops needs --longpipe-stats: drops are checked against the sender's engine")

    problems = []
    consumers = check_consumers(json.load(open(args.result)), args, problems)
    if args.longpipe_stats:
        check_longpipe_stats(args.longpipe_stats, consumers, args, problems)
    if problems:
        print("FAIL: " + "\n      ".join(problems), file=sys.stderr)
        return 1
    for c in consumers:
        print(f"consumer {c['consumer']}: {c['frames_received']}/{args.frames} frames in order, "
              f"{c['dropped_by_policy']} dropped by policy")
    print(f"summaries: as configured at {len(consumers)} consumer(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
