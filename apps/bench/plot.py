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


def draw(summary_rows, meta, out_dir):
    """Writes the three PNG files into out_dir and returns their paths."""
    all_sizes = sorted({int(r["size_bytes"]) for r in summary_rows})
    if not all_sizes:
        return []
    floor = _floor_curve(meta, all_sizes)
    routes = [route for route in ROUTE_STYLES if any(r["route"] == route and r["status"] == "ok" for r in summary_rows)]
    paths = []

    def new_figure():
        fig, ax = plt.subplots(figsize=(8, 5.5))
        ax.grid(True, which="both", alpha=0.3)
        return fig, ax

    def save(fig, ax, name):
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=DPI)
        plt.close(fig)
        paths.append(path)

    # 1. Aggregate latency against message size.
    fig, ax = new_figure()
    for route in routes:
        label, color, marker = ROUTE_STYLES[route]
        sizes, medians, minimums = _route_points(summary_rows, route)
        ax.plot(sizes, medians, marker=marker, color=color, label=f"{label} (median)")
        ax.scatter(sizes, minimums, marker="_", color=color, s=80, label=f"{label} (minimum)")
    ax.plot(all_sizes, floor, label="floor R/X + P/B", **FLOOR_STYLE)
    _size_axis(ax, all_sizes)
    ax.set_yscale("log")
    ax.set_xlabel("message size P (bytes)")
    ax.set_ylabel("aggregate latency t = T / X (s)")
    ax.set_title(_title(meta, "Aggregate latency"), fontsize=9)
    save(fig, ax, "aggregate-latency.png")

    # 2. Latency against throughput: each point is one message size.
    fig, ax = new_figure()
    for route in routes:
        label, color, marker = ROUTE_STYLES[route]
        sizes, medians, _ = _route_points(summary_rows, route)
        ax.plot(_throughputs_mbit(sizes, medians), medians, marker=marker, color=color, label=label)
    ax.plot(_throughputs_mbit(all_sizes, floor), floor, label="floor R/X + P/B", **FLOOR_STYLE)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("throughput P / t (Mbit/s)")
    ax.set_ylabel("aggregate latency t (s)")
    ax.set_title(_title(meta, "Latency vs throughput"), fontsize=9)
    save(fig, ax, "latency-throughput.png")

    # 3. Throughput against message size.
    fig, ax = new_figure()
    for route in routes:
        label, color, marker = ROUTE_STYLES[route]
        sizes, medians, _ = _route_points(summary_rows, route)
        ax.plot(sizes, _throughputs_mbit(sizes, medians), marker=marker, color=color, label=label)
    ax.plot(all_sizes, _throughputs_mbit(all_sizes, floor), label="floor (best possible)", **FLOOR_STYLE)
    _size_axis(ax, all_sizes)
    ax.set_yscale("log")
    ax.set_xlabel("message size P (bytes)")
    ax.set_ylabel("throughput P / t (Mbit/s)")
    ax.set_title(_title(meta, "Throughput"), fontsize=9)
    save(fig, ax, "throughput.png")
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
