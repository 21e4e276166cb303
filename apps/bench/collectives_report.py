"""The collectives benchmark's report: the summary rows, table.md and the plots (apps/bench/collectives).

Each function takes the benchmark's run (its arguments, rows, notes, measured round trips and load)
and the summary rows the first one makes; nothing here measures anything.
"""

import os
import sys

import collectives_sites as sites

PATH_LABELS = {"openmpi": "Open MPI alone", "longpipe": "LongPipe (site-aware collectives)"}
# The collectives' goals (multiples of the limit).
GOAL_OF_LIMIT = 1.25


def say(text):
    print(f"collectives: {text}", file=sys.stderr, flush=True)


def summary(run):
    by_key = {(r["placement"], r["operation"], r["bytes"], r["path"]): r for r in run.rows}
    out = []
    for placement in run.args.placements:
        for point in run.args.points:
            operation, size = point.split(":")[0], int(point.split(":")[1])
            row = {"placement": placement, "operation": operation, "bytes": size}
            limit = None
            for path in run.args.paths:
                r = by_key.get((placement, operation, size, path))
                row[f"{path}_ms"] = r["per_call_ms"] if r else ""
                row[f"{path}_first_ms"] = r["first_ms"] if r else ""
                limit = r["limit_ms"] if r else limit
            row["limit_ms"] = limit if limit is not None else ""
            for path in run.args.paths:
                value = row[f"{path}_ms"]
                row[f"{path}_x_limit"] = round(value / limit, 3) if value != "" and limit else ""
            if "openmpi" in run.args.paths and "longpipe" in run.args.paths and row["longpipe_ms"] != "" \
                    and row["openmpi_ms"] != "" and row["longpipe_ms"] > 0:
                row["speedup"] = round(row["openmpi_ms"] / row["longpipe_ms"], 2)
            out.append(row)
    return out

def table(run, summary):
    profile = run.args.profile + ("" if run.args.delay is None else f" with {run.args.delay:g} ms one way")
    where = f"two sites: {profile}"
    limit_text = "one one-way delay plus the bytes that must cross the link at its rate."
    if run.args.sites:
        where = f"{run.args.sites} sites (access links {', '.join(run.args.site_specs)}; ranks on " \
                f"{', '.join(sites.site_hosts(run.args.sites))})"
        limit_text = ("the largest one-way delay over the site pairs that must exchange data (delay(S) + "
                      "delay(T): two access links) plus the time the busiest access-link direction needs for "
                      "the bytes that must cross it at its rate. Measured RTTs (ms): " +
                      ", ".join(f"{pair} {rtt:.1f}" for pair, rtt in run.site_rtts_ms.items()) + ".")
    lines = [f"# MPI collectives across {where}, {run.args.ranks_per_site} ranks per site",
             "",
             f"Time per call of back-to-back calls: the interval between the completions (the moment the "
             f"last rank returns; all ranks share one host's clock) of call 2 and call {run.args.calls + 2} "
             f"of a loop, over {run.args.calls}: the steady state, without the up to one one-way delay by "
             "which a barrier lets one site go first. A collective that needs data from every rank cannot "
             "complete faster than the one-way delay per call; Bcast and Gather may pipeline below it. The "
             "first call of each point (first rank's entry to last rank's return) is reported apart "
             f"(LongPipe may open the leaders' sessions then). Limit: {limit_text} Load average at the "
             f"jobs' starts: {', '.join(f'{x:.1f}' for x in run.load)} (2 cores; the link emulator is a "
             "user-space process).",
             ""]
    header = "| placement | collective | size | limit ms |"
    rule = "|---|---|---|---|"
    for path in run.args.paths:
        header += f" {PATH_LABELS[path]} ms (x limit) | first call ms |"
        rule += "---|---|"
    if len(run.args.paths) == 2:
        header += " speed-up |"
        rule += "---|"
    lines += [header, rule]
    for row in summary:
        size = human_size(row["bytes"], row["operation"])
        line = f"| {row['placement']} | {row['operation']} | {size} | {row['limit_ms']} |"
        for path in run.args.paths:
            value = row[f"{path}_ms"]
            line += (f" {value:.1f} ({row[f'{path}_x_limit']:.2f}) | {row[f'{path}_first_ms']:.1f} |"
                     if value != "" else " - | - |")
        if len(run.args.paths) == 2:
            line += f" {row.get('speedup', '-')} |"
        lines.append(line)
    if run.notes:
        lines += ["", "Notes:"] + [f"- {note}" for note in run.notes]
    return "\n".join(lines) + "\n"

def plot(run, summary):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("python3-matplotlib missing: no plots")
        return
    for placement in run.args.placements:
        rows = [r for r in summary if r["placement"] == placement]
        if not rows:
            continue
        labels = [f"{r['operation']}\n{human_size(r['bytes'], r['operation'])}" for r in rows]
        fig, ax = plt.subplots(figsize=(12, 5))
        width = 0.8 / max(1, len(run.args.paths))
        for i, path in enumerate(run.args.paths):
            values = [r[f"{path}_x_limit"] if r[f"{path}_x_limit"] != "" else 0 for r in rows]
            ax.bar([x + i * width for x in range(len(rows))], values, width, label=PATH_LABELS[path])
        ax.axhline(1.0, color="black", linewidth=1, label="limit (one-way delay + bytes / rate)")
        ax.axhline(GOAL_OF_LIMIT, color="grey", linestyle="--", linewidth=1, label=f"goal {GOAL_OF_LIMIT} x limit")
        ax.set_xticks([x + width * (len(run.args.paths) - 1) / 2 for x in range(len(rows))])
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("time per call / limit")
        topology = ",".join(run.args.site_specs) if run.args.sites else run.args.profile
        ax.set_title(f"MPI collectives, {topology}, {run.args.ranks_per_site} ranks per site, "
                     f"{placement} placement")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(run.args.out, f"collectives-{placement}.png"), dpi=100)
        plt.close(fig)


def human_size(size, operation):
    if operation == "barrier":
        return "-"
    suffix = " per pair" if operation in ("gather", "alltoall") else ""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}{suffix}"
    return f"{size} B{suffix}"
