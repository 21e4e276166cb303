#!/usr/bin/python3
"""Results of the aggregate-latency benchmark: CSV files, the Markdown table, the plots.

A results directory holds raw.csv (one row per batch), summary.csv (one row per route and size),
notes.csv (what was skipped, cut short or failed, and why), meta.csv (profile, RTT, X, ...),
table.md and the PNG plots.

Usage: report.py OUT_DIR IN_DIR...
  Combines several runs of one profile (for instance a quick sweep and a run of extra sizes) into
  OUT_DIR. For a route and size measured in several runs, the run named last that measured it wins; a
  point one run skipped and another measured counts as measured.
"""

import csv
import os
import sys

# PVM's routes (lp-bench), then Open MPI's (lp-mpi-bench).
PVM_ROUTES = ("default", "direct", "longpipe")
MPI_ROUTES = ("mpi-default", "mpi-tuned", "mpi-longpipe")
ROUTES = PVM_ROUTES + MPI_ROUTES
ROUTE_LABELS = {"default": "pvmd default", "direct": "PvmRouteDirect", "longpipe": "LongPipe",
                "mpi-default": "Open MPI TCP default", "mpi-tuned": "Open MPI TCP tuned",
                "mpi-longpipe": "LongPipe (MPI)"}
# Table columns "A / B": how many times longer route A takes than LongPipe on the same system.
RATIO_COLUMNS = (("default", "longpipe"), ("direct", "longpipe"),
                 ("mpi-default", "mpi-longpipe"), ("mpi-tuned", "mpi-longpipe"))
# meta.csv fields that must agree for runs to be combined.
COMPARABLE_META = ("profile", "tune_hosts", "count", "ack", "encoding", "send")
# A meta field results written before it existed lack: its value then.
META_DEFAULTS = {"send": "blocking"}


def human_size(size):
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


def rate_text(rate_bit_s):
    rate = float(rate_bit_s)
    return f"{rate / 1e6:g} Mbit/s" if rate > 0 else "unlimited"


def format_ms(seconds):
    value = float(seconds) * 1000
    return f"{value:.3g}" if value < 100 else f"{value:.0f}"


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, rows, fieldnames=None):
    # Every column of every row, in first-seen order (runs of different versions may be combined).
    fieldnames = fieldnames or list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as f:
        if fieldnames:
            writer = csv.DictWriter(f, fieldnames=fieldnames, restval="")
            writer.writeheader()
            writer.writerows(rows)


def note_text(note):
    """A note about one point names route and size; a note about a whole route (no size) or the
    whole run (no route) says everything itself."""
    if note["route"] and note["size_bytes"] != "":
        return f"{ROUTE_LABELS[note['route']]}, P = {human_size(int(note['size_bytes']))}: {note['note']}"
    return note["note"]


def send_text(meta):
    """The MPI send mode when it is not the default (older results have no 'send')."""
    send = meta.get("send", META_DEFAULTS["send"])
    if send == "bidirectional":
        return "both ways at once (X Isend and X Irecv per rank per window), "
    return "" if send == "blocking" else f"send {send}, "


def markdown_table(summary_rows, meta, notes):
    """One row per size, one column per route: median t (minimum) in ms and its ratio to the floor,
    and the first batch of the fresh job where the run recorded it; then how many times slower the
    other routes are than LongPipe."""
    routes = [r for r in ROUTES if any(row["route"] == r for row in summary_rows)]
    sizes = sorted({int(row["size_bytes"]) for row in summary_rows})
    by_key = {(row["route"], int(row["size_bytes"])): row for row in summary_rows}
    tuning = "hosts tuned (--tune-hosts)" if str(meta["tune_hosts"]) == "1" else "stock hosts"
    lines = [f"Profile {meta['profile']}, {tuning}, measured RTT {float(meta['rtt_s']) * 1000:.1f} ms, "
             f"rate {rate_text(meta['rate_bit_s'])}, X = {meta['count']}, ack {meta['ack']}, "
             f"{send_text(meta)}"
             f"encoding {meta['encoding']}; {meta['date']}. Cells: t = T / X in ms, median (minimum) "
             "of the measured batches, and xN = median / floor" + first_batch_text(summary_rows, meta) + ".",
             ""]
    header = ["P", "floor t (ms)"] + [f"{ROUTE_LABELS[r]} t (ms)" for r in routes]
    ratios = [(a, b) for a, b in RATIO_COLUMNS if a in routes and b in routes]
    header += [f"{ROUTE_LABELS[a]} / {ROUTE_LABELS[b]}" for a, b in ratios]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def median(route, size):
        row = by_key.get((route, size))
        return float(row["median_t_s"]) if row and row["status"] == "ok" else None

    for size in sizes:
        floor = float(next(row["floor_t_s"] for row in summary_rows if int(row["size_bytes"]) == size))
        cells = [human_size(size), format_ms(floor)]
        for route in routes:
            row = by_key.get((route, size))
            if row is None:
                cells.append("not run")
            elif row["status"] != "ok":
                cells.append("skipped" if row["status"].startswith("skipped") else "failed")
            else:
                outliers = len(row["outlier_batches"].split())
                cells.append(f"{format_ms(row['median_t_s'])} ({format_ms(row['min_t_s'])}), "
                             f"x{float(row['median_over_floor']):.3g}" + (f", {outliers} outlier(s)" if outliers else "")
                             + first_batch_cell(row))
        for a_route, b_route in ratios:
            a, b = median(a_route, size), median(b_route, size)
            cells.append(f"{a / b:.3g}" if a and b else "")
        lines.append("| " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "Notes:"] + [f"- {note_text(note)}" for note in notes]
    return "\n".join(lines) + "\n"


def first_batch_text(summary_rows, meta):
    """The headline's words for the first-batch figure, when the rows have one."""
    if not any(row.get("first_t_s") for row in summary_rows):
        return ""
    return (f"; first = t and xN of batch 1 of the fresh job, whose connections open during it "
            f"(the median leaves out {meta.get('warmup', 1)} warm-up batch(es))")


def first_batch_cell(row):
    first = row.get("first_t_s")
    if not first:
        return ""
    return f"; first {format_ms(first)}, x{float(first) / float(row['floor_t_s']):.3g}"


def write_report(out_dir, raw_rows, summary_rows, notes, meta, plots=True):
    """Writes every results file into out_dir; returns the Markdown table."""
    os.makedirs(out_dir, exist_ok=True)
    write_csv(os.path.join(out_dir, "raw.csv"), raw_rows)
    write_csv(os.path.join(out_dir, "summary.csv"), summary_rows)
    write_csv(os.path.join(out_dir, "notes.csv"), notes, ["route", "size_bytes", "note"])
    write_csv(os.path.join(out_dir, "meta.csv"), [meta])
    table = markdown_table(summary_rows, meta, notes)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    if plots and summary_rows:
        import plot  # matplotlib is needed only here

        plot.draw(summary_rows, meta, out_dir)
    return table


def route_measured(route, summaries):
    """True when some run measured a point of route (its note "route skipped" no longer holds)."""
    return any(row["route"] == route and row["status"] == "ok" for rows in summaries for row in rows)


def combine(in_dirs):
    """(raw, summary, notes, meta) of several runs of one profile; later runs win per point."""
    metas = [read_csv(os.path.join(d, "meta.csv"))[0] for d in in_dirs]
    for meta in metas[1:]:
        for field in COMPARABLE_META:
            value, first = (m.get(field, META_DEFAULTS.get(field)) for m in (meta, metas[0]))
            if value != first:
                raise SystemExit(f"report: cannot combine runs with different {field}: {first} and {value}")
    chosen = {}  # (route, size) -> index of the run whose row is kept
    summaries = [read_csv(os.path.join(d, "summary.csv")) for d in in_dirs]
    for index, rows in enumerate(summaries):
        for row in rows:
            key = (row["route"], row["size_bytes"])
            if row["status"] == "ok" or key not in chosen:
                chosen[key] = index
    summary, raw, notes = [], [], []
    for index, directory in enumerate(in_dirs):
        summary += [r for r in summaries[index] if chosen[(r["route"], r["size_bytes"])] == index]
        raw += [r for r in read_csv(os.path.join(directory, "raw.csv"))
                if chosen.get((r["route"], r["size_bytes"])) == index]
        notes += [n for n in read_csv(os.path.join(directory, "notes.csv"))
                  if not n["route"] or chosen.get((n["route"], n["size_bytes"])) == index
                  or (n["size_bytes"] == "" and not route_measured(n["route"], summaries))]
    summary.sort(key=lambda r: (ROUTES.index(r["route"]), int(r["size_bytes"])))
    notes.sort(key=lambda n: (ROUTES.index(n["route"]) + 1 if n["route"] else 0, int(n["size_bytes"] or 0)))
    meta = dict(metas[0])
    meta["rtt_s"] = f"{sum(float(m['rtt_s']) for m in metas) / len(metas):.6f}"
    meta["date"] = ", ".join(sorted({m["date"] for m in metas}))
    meta["command"] = "; ".join(m["command"] for m in metas)
    return raw, summary, notes, meta


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    raw, summary, notes, meta = combine(argv[2:])
    print(write_report(argv[1], raw, summary, notes, meta), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
