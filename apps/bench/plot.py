#!/usr/bin/python3
"""The three classic plots of the aggregate-latency benchmark, with the physical floor drawn in.

  aggregate-latency.png   t = T / X against message size P
  latency-throughput.png  t against the throughput it gives (P / t)
  throughput.png          throughput against P

Usage: plot.py RESULTS_DIR   (re-draws the plots from RESULTS_DIR/summary.csv and meta.csv)
"""

import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stats  # noqa: E402

ROUTE_STYLES = {
    "default": ("pvmd default route", "tab:red", "o"),
    "direct": ("PvmRouteDirect", "tab:orange", "s"),
    "longpipe": ("LongPipe", "tab:blue", "^"),
    "mpi-default": ("Open MPI TCP, defaults", "tab:red", "o"),
    "mpi-tuned": ("Open MPI TCP, eager/rendezvous limits raised", "tab:orange", "s"),
    "mpi-longpipe": ("LongPipe (MPI)", "tab:blue", "^"),
}
FLOOR_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1}
DPI = 120


def _route_points(summary_rows, route):
    rows = [r for r in summary_rows if r["route"] == route and r["status"] == "ok"]
    rows.sort(key=lambda r: int(r["size_bytes"]))
    sizes = [int(r["size_bytes"]) for r in rows]
    medians = [float(r["median_t_s"]) for r in rows]
    minimums = [float(r["min_t_s"]) for r in rows]
    return sizes, medians, minimums


def _floor_curve(meta, sizes):
    rtt, count, rate = float(meta["rtt_s"]), int(meta["count"]), float(meta["rate_bit_s"])
    return [stats.floor_per_message(rtt, count, size, rate) for size in sizes]


def _title(meta, what):
    tuned = ", hosts tuned" if meta.get("tune_hosts") == "1" else ", stock hosts"
    return (f"{what}: profile {meta['profile']} (RTT {float(meta['rtt_s']) * 1000:.0f} ms, "
            f"{_rate(meta)}{tuned}), X = {meta['count']}, ack {meta['ack']}")


def _size_label(size):
    for unit, factor in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor:
            return f"{size // factor}{unit}"
    return f"{size}"


def _size_axis(ax, sizes):
    """Log-2 size axis labelled 1, 4, ..., 1K, ..., 1M at the measured sizes."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([_size_label(size) for size in sizes], fontsize=8)
    ax.minorticks_off()


def _rate(meta):
    rate = float(meta["rate_bit_s"])
    return f"{rate / 1e6:g} Mbit/s" if rate > 0 else "unlimited rate"


def _throughputs_mbit(sizes, per_message):
    return [stats.throughput_bit_s(p, t) / 1e6 for p, t in zip(sizes, per_message)]


# The three plots: file, title, axis labels, and how a route's (sizes, t) become (x, y).
# x_is_size puts the message sizes on a log-2 axis; with_minimum adds each point's minimum.
PLOTS = [
    {"file": "aggregate-latency.png", "title": "Aggregate latency", "x_is_size": True, "with_minimum": True,
     "xlabel": "message size P (bytes)", "ylabel": "aggregate latency t = T / X (s)",
     "xy": lambda sizes, t: (sizes, t), "floor_label": "floor R/X + P/B"},
    {"file": "latency-throughput.png", "title": "Latency vs throughput", "x_is_size": False, "with_minimum": False,
     "xlabel": "throughput P / t (Mbit/s)", "ylabel": "aggregate latency t (s)",
     "xy": lambda sizes, t: (_throughputs_mbit(sizes, t), t), "floor_label": "floor R/X + P/B"},
    {"file": "throughput.png", "title": "Throughput", "x_is_size": True, "with_minimum": False,
     "xlabel": "message size P (bytes)", "ylabel": "throughput P / t (Mbit/s)",
     "xy": lambda sizes, t: (sizes, _throughputs_mbit(sizes, t)), "floor_label": "floor (best possible)"},
]


def draw(summary_rows, meta, out_dir):
    """Writes the three PNG files into out_dir and returns their paths."""
    all_sizes = sorted({int(r["size_bytes"]) for r in summary_rows})
    if not all_sizes:
        return []
    # The floor is drawn at every power of two in the measured range, so that its bend shows.
    floor_sizes = sorted({2**k for k in range(all_sizes[-1].bit_length()) if all_sizes[0] <= 2**k} | set(all_sizes))
    floor = _floor_curve(meta, floor_sizes)
    routes = [route for route in ROUTE_STYLES if any(r["route"] == route and r["status"] == "ok" for r in summary_rows)]
    paths = []
    for spec in PLOTS:
        fig, ax = plt.subplots(figsize=(8, 5.5))
        ax.grid(True, which="both", alpha=0.3)
        for route in routes:
            label, color, marker = ROUTE_STYLES[route]
            sizes, medians, minimums = _route_points(summary_rows, route)
            suffix = " (median)" if spec["with_minimum"] else ""
            ax.plot(*spec["xy"](sizes, medians), marker=marker, color=color, label=label + suffix)
            if spec["with_minimum"]:
                ax.scatter(*spec["xy"](sizes, minimums), marker="_", color=color, s=80, label=f"{label} (minimum)")
        ax.plot(*spec["xy"](floor_sizes, floor), label=spec["floor_label"], **FLOOR_STYLE)
        if spec["x_is_size"]:
            _size_axis(ax, all_sizes)
        else:
            ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(spec["xlabel"])
        ax.set_ylabel(spec["ylabel"])
        ax.set_title(_title(meta, spec["title"]), fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out_dir, spec["file"])
        fig.savefig(path, dpi=DPI)
        plt.close(fig)
        paths.append(path)
    return paths


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out_dir = argv[1]
    summary = read_csv(os.path.join(out_dir, "summary.csv"))
    meta = read_csv(os.path.join(out_dir, "meta.csv"))[0]
    for path in draw(summary, meta, out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
