#!/usr/bin/env python3
"""Prints the STATUS answers of site gateways (netem/gateways status, ./longpipe status).

Usage: gateway_status.py [--json] SITE ANSWER [SITE ANSWER]...
ANSWER is a gateway's answer to `STATUS json` (one JSON object). As text: one block per gateway,
nested objects indented and lists of objects (sessions, streams, queues) one entry per line; with
--json: one object {SITE: status, ...}. Exit status 1 when an answer is not a JSON object.
"""
import json
import sys


def scalar(value):
    if value is None:
        return "none"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


# The fields shown of a long list entry (an engine session has dozens; --json has them all).
SUMMARY_FIELDS = ("site", "peer", "endpoint", "mode", "up", "connected", "streams", "queued_to_peer_bytes",
                  "queued_to_local_bytes", "queued_messages", "in_flight_bytes", "bytes_sent", "bytes_received",
                  "messages_sent", "messages_received", "rtt_ms", "reconnects", "failure", "down_reason", "carrier")
LONG_ENTRY = 12


def flat(entry):
    """One line for a list entry: key=value pairs (nested ones as key.sub=value); of a long entry
    only SUMMARY_FIELDS."""
    parts = []
    if len(entry) > LONG_ENTRY:
        entry = {key: entry[key] for key in SUMMARY_FIELDS if key in entry}
    for key, value in entry.items():
        if isinstance(value, dict):
            parts += [f"{key}.{sub}" + "=" + scalar(v) for sub, v in value.items() if not isinstance(v, (dict, list))]
        elif isinstance(value, list):
            parts.append(f"{key}=[{', '.join(scalar(v) for v in value)}]")
        else:
            parts.append(f"{key}={scalar(value)}")
    return " ".join(parts)


def show(value, indent):
    pad = "  " * indent
    for key, item in value.items():
        if isinstance(item, dict):
            print(f"{pad}{key}:")
            show(item, indent + 1)
        elif isinstance(item, list):
            print(f"{pad}{key}: {len(item)}")
            for element in item:
                print(f"{pad}  - " + (flat(element) if isinstance(element, dict) else scalar(element)))
        else:
            print(f"{pad}{key}: {scalar(item)}")


def main(argv):
    as_json = bool(argv) and argv[0] == "--json"
    if as_json:
        argv = argv[1:]
    if not argv or len(argv) % 2:
        sys.exit("usage: gateway_status.py [--json] SITE ANSWER [SITE ANSWER]...")
    statuses, good = {}, True
    for site, answer in zip(argv[0::2], argv[1::2]):
        try:
            status = json.loads(answer)
            if not isinstance(status, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            status, good = {"error": f"unreadable STATUS answer ({error}): {answer.strip()[:200]}"}, False
        if "error" in status:
            good = False
        statuses[site] = status
    if as_json:
        print(json.dumps(statuses, indent=2, sort_keys=True))
    else:
        for site, status in statuses.items():
            print(f"gateway {site}:")
            show(status, 1)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
