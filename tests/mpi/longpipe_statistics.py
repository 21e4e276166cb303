#!/usr/bin/env python3
"""longpipe_statistics.py STATS SITES [--rank0-sent N] [--rank0-received N]

Checks the LongPipe statistics of one MPI job run under the preload: every rank wrote its file (STATS
is the job's LONGPIPE_STATS: the MPI front end puts the world rank in place of %r, or appends
.RANK), every session leads to a rank of the job, no LongPipe message went between two ranks of one
site, messages did cross the sites both ways, and rank 0 sent / received at least N of them.
SITES is the site of each world rank, e.g. 0,0,1,1. Exits 1 with the reason on failure.
"""
import argparse
import json
import sys


def stats_file(stats, rank):
    return stats.replace("%r", str(rank)) if "%r" in stats else f"{stats}.{rank}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stats")
    parser.add_argument("sites", type=lambda text: [int(site) for site in text.split(",")])
    parser.add_argument("--rank0-sent", type=int, default=0)
    parser.add_argument("--rank0-received", type=int, default=0)
    arguments = parser.parse_args()
    sites = arguments.sites

    stats = {}
    for rank in range(len(sites)):
        path = stats_file(arguments.stats, rank)
        try:
            with open(path) as file:
                stats[rank] = json.load(file)
        except (OSError, ValueError) as error:
            sys.exit(f"FAIL: rank {rank} wrote no LongPipe statistics ({path}: {error})")
    rank_of = {s["local_endpoint"]: rank for rank, s in stats.items()}
    sent = received = 0
    for rank, s in stats.items():
        for session in s["sessions"]:
            peer = rank_of.get(session["peer"])
            if peer is None:
                sys.exit(f"FAIL: rank {rank} has a session to an endpoint of no rank: {session['peer']}")
            if sites[peer] == sites[rank] and session["messages_sent"] > 0:
                sys.exit(f"FAIL: rank {rank} sent {session['messages_sent']} messages over LongPipe to rank {peer} of its own site")
            sent += session["messages_sent"]
            received += session["messages_received"]
    rank0_sent = sum(session["messages_sent"] for session in stats[0]["sessions"])
    rank0_received = sum(session["messages_received"] for session in stats[0]["sessions"])
    print(f"== LongPipe sessions carried {sent} message(s) out, {received} in; rank 0 sent {rank0_sent}, "
          f"received {rank0_received}", file=sys.stderr)
    if sent == 0 or received == 0:
        sys.exit("FAIL: LongPipe carried no inter-site messages")
    if rank0_sent < arguments.rank0_sent:
        sys.exit(f"FAIL: rank 0 sent {rank0_sent} messages over LongPipe, expected at least {arguments.rank0_sent}")
    if rank0_received < arguments.rank0_received:
        sys.exit(f"FAIL: rank 0 received {rank0_received} messages over LongPipe, expected at least {arguments.rank0_received}")


if __name__ == "__main__":
    main()
