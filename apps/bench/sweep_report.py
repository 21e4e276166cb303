"""What apps/bench/sweep writes: raw.csv, summary.csv, meta.json, table.md and two plots, and the path
goals each point is checked against (reported, never enforced). A mixin of the Sweep class
(sweep_point.py): it reads the rows and notes the run collected."""

import csv
import json
import math
import os
import sys

from bench_common import speaker
from report import human_size
from sweep_grid import size_label
from sweep_srt import SRT_BUFFER_BYTES, SRT_FLOW_WINDOW, SRT_MODES, srt_key

say = speaker("sweep")

# The path goals (reported, never enforced).
GOAL_WARM_X = 1.15          # warm median t / floor on loss-free points, at 1 KiB and 1 MiB
GOAL_COLD_X = 4.0           # first batch of a fresh process on a new path, t / floor
GOAL_SIZES = (1024, 1 << 20)
GOAL_GOODPUT = {1.0: 0.90, 5.0: 0.75}  # loss % -> share of the link rate
# Payload a TCP stream can carry in 1500-byte packets with timestamps: 1448 / 1500.
TCP_PAYLOAD_SHARE = 1448 / 1500


class SweepReport:
    """The goals and the output of a Sweep (its args, summary, raw rows and notes)."""

    # --- goals ----------------------------------------------------------------------------------

    def goal_misses(self, point, row):
        misses = []
        if point.loss_pct == 0:
            for size in GOAL_SIZES:
                label = size_label(size)
                if row.get(f"{label}_warm_x") not in (None, "") and row[f"{label}_warm_x"] > GOAL_WARM_X:
                    misses.append(f"{human_size(size)} warm x{row[f'{label}_warm_x']:.2f} > {GOAL_WARM_X}")
                if row.get(f"{label}_first_x") not in (None, "") and row[f"{label}_first_x"] > GOAL_COLD_X:
                    misses.append(f"{human_size(size)} first batch x{row[f'{label}_first_x']:.2f} > {GOAL_COLD_X:g}")
        goal = GOAL_GOODPUT.get(point.loss_pct)
        share = row.get("longpipe_goodput_share")
        if goal is not None:
            if share in (None, ""):
                misses.append(f"goodput at {point.loss_pct:g} % loss not measured (goal {100 * goal:.0f} %)")
            elif share < goal:
                misses.append(f"goodput {100 * share:.0f} % < {100 * goal:.0f} % at {point.loss_pct:g} % loss")
        return misses

    # --- output ---------------------------------------------------------------------------------

    def summary_fields(self):
        fields = ["point", "one_way_ms", "rtt_ms", "measured_rtt_ms", "rate_mbit", "loss_pct"]
        for size in self.args.sizes:
            label = size_label(size)
            fields += [f"{label}_{k}" for k in ("floor_ms", "first_ms", "first_x", "warm_ms", "warm_x",
                                                 "warm_batches")]
        fields += ["longpipe_goodput_mbit", "longpipe_goodput_share"]
        for congestion in self.args.congestion:
            fields += [f"{congestion}_goodput_mbit", f"{congestion}_goodput_share"]
        for mode in self.args.srt_modes:
            fields += [f"{srt_key(mode)}_goodput_mbit", f"{srt_key(mode)}_goodput_share"]
        return fields + ["seconds", "load_start", "load_end", "goal_misses", "notes"]

    def write(self):
        os.makedirs(self.args.out, exist_ok=True)
        raw_fields = ["point", "one_way_ms", "rate_mbit", "loss_pct", "tool", "size_bytes", "congestion", "batch",
                      "kind", "seconds", "t_ms", "floor_ms", "t_over_floor", "lp_perf_rtt_ms", "goodput_mbit",
                      "goodput_share"]
        with open(os.path.join(self.args.out, "raw.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=raw_fields)
            writer.writeheader()
            writer.writerows(self.raw)
        with open(os.path.join(self.args.out, "summary.csv"), "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.summary_fields(), restval="")
            writer.writeheader()
            writer.writerows(self.summary)
        meta = {"date": self.started.isoformat(timespec="seconds"), "command": " ".join(sys.argv),
                "count": self.args.count, "batches": self.args.batches, "sizes": self.args.sizes,
                "iperf_seconds": self.args.iperf_seconds, "congestion": self.args.congestion,
                "srt_seconds": self.args.srt_seconds, "srt_modes": self.args.srt_modes,
                "srt_options": {"buffers_bytes": SRT_BUFFER_BYTES, "flow_window_packets": SRT_FLOW_WINDOW,
                                "modes": SRT_MODES, "paced_maxbw": "the link rate"},
                "point_budget_s": self.args.point_budget, "carrier": self.args.carrier or "default", "hosts": "tuned" if self.args.tune_hosts else "stock",
                "dropped_longpipe_variables": self.dropped, "notes": self.notes}
        with open(os.path.join(self.args.out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        table = self.table()
        with open(os.path.join(self.args.out, "table.md"), "w") as f:
            f.write(table)
        print(table)
        if not self.args.no_plots:
            self.plot()
        say(f"results in {self.args.out}")

    def table(self):
        sizes = self.args.sizes
        loads = [r["load_start"] for r in self.summary if "load_start" in r] + \
                [r["load_end"] for r in self.summary if "load_end" in r]
        load_text = f"{min(loads):.1f}-{max(loads):.1f}" if loads else "-"
        iperf_text = (f"iperf3 {', '.join(self.args.congestion)} for {self.args.iperf_seconds:g} s each"
                      if self.args.iperf_seconds > 0 else "no iperf3")
        srt_text = (f"SRT {self.args.srt_seconds:g} s (+ its handshake) per mode: `SRT file` = file mode with SRT's "
                    "file congestion control, `SRT paced` = file mode paced at the link rate (told the rate, "
                    "the only tool that is); bytes received / time from the sender's start"
                    if self.args.srt_seconds > 0 and self.args.srt_modes else "no SRT")
        lines = [
            "# Path sweep", "",
            f"{self.started:%Y-%m-%d %H:%M} UTC, {len(self.summary)} point(s), "
            f"{'tuned' if self.args.tune_hosts else 'stock'} hosts, engine defaults (no LONGPIPE_* path setting)"
            f"{f', LONGPIPE_CARRIER={self.args.carrier}' if self.args.carrier else ''}. "
            f"lp-perf, X = {self.args.count}, every message acknowledged, a fresh serve + run per size, "
            f"{self.args.batches} batches: `first` = batch 1 of the fresh process (connect, authentication, slow "
            f"start), `warm` = median of the others; xN = t / floor, floor = R / X + P / B (R: ping's minimum, "
            f"B: the link rate). Goodput as a share of the link rate (IP packets; TCP payload tops out at "
            f"{100 * TCP_PAYLOAD_SHARE:.1f} %): LongPipe's from the warm {human_size(max(sizes))} batches "
            f"(bytes / (T - R)), {iperf_text} (whole run, slow start included), {srt_text}. Load average (1 min) "
            f"{load_text} on 2 shared cores; the link emulator is a user-space process (its limits: "
            "apps/bench/README.md, \"Path sweep\").", ""]
        header = "| path (one way / rate / loss) | RTT ms |"
        rule = "|---|---|"
        for size in sizes:
            header += f" {human_size(size)} floor ms | {human_size(size)} first ms (x) | {human_size(size)} warm ms (x) |"
            rule += "---|---|---|"
        header += " LongPipe goodput |"
        rule += "---|"
        for congestion in self.args.congestion:
            header += f" {congestion} |"
            rule += "---|"
        for mode in self.args.srt_modes:
            header += f" SRT {mode} |"
            rule += "---|"
        header += " load |"
        rule += "---|"
        lines += [header, rule]

        def number(value):
            return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"

        def share(value):
            return f"{100 * value:.0f} %" if value not in (None, "") else "-"

        for row in self.summary:
            line = f"| {row['point']} | {row.get('measured_rtt_ms') or '-'} |"
            for size in sizes:
                label = size_label(size)
                first, warm = row.get(f"{label}_first_ms", ""), row.get(f"{label}_warm_ms", "")
                line += f" {number(row[f'{label}_floor_ms'])} |" if row.get(f"{label}_floor_ms") else " - |"
                line += f" {number(first)} (x{row[f'{label}_first_x']:.2f}) |" if first != "" else " - |"
                line += f" {number(warm)} (x{row[f'{label}_warm_x']:.2f}) |" if warm != "" else " - |"
            line += f" {share(row.get('longpipe_goodput_share'))} |"
            for congestion in self.args.congestion:
                line += f" {share(row.get(f'{congestion}_goodput_share'))} |"
            for mode in self.args.srt_modes:
                line += f" {share(row.get(f'{srt_key(mode)}_goodput_share'))} |"
            line += f" {row.get('load_start', '-')}-{row.get('load_end', '-')} |"
            lines.append(line)
        misses = [(r["point"], r.get("goal_misses", "")) for r in self.summary if r.get("goal_misses")]
        lines += ["", f"The path goals (warm <= {GOAL_WARM_X}x and first batch <= {GOAL_COLD_X:g}x the floor at 1 KiB "
                  "and 1 MiB on loss-free points; LongPipe goodput >= 90 % at 1 % loss, >= 75 % at 5 %): "
                  + (f"{len(misses)} of {len(self.summary)} points miss." if misses else "no point misses.")]
        lines += [f"- {name}: {text}" for name, text in misses]
        notes = [(r["point"], r.get("notes", "")) for r in self.summary if r.get("notes")]
        if notes or self.notes:
            lines += ["", "Notes:"] + [f"- {name}: {text}" for name, text in notes] + [f"- {n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    def plot(self):
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            import matplotlib.ticker
        except ImportError:
            say("python3-matplotlib missing: no plots")
            return
        rows = self.summary
        if not rows:
            return
        labels = [r["point"].replace("/", "\n", 1) for r in rows]
        positions = range(len(rows))
        # t / floor: cold and warm at each size.
        series = []
        for size in self.args.sizes:
            label = size_label(size)
            series += [(f"{human_size(size)} first batch", f"{label}_first_x"),
                       (f"{human_size(size)} warm median", f"{label}_warm_x")]
        fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(rows) + 3), 5))
        width = 0.8 / len(series)
        for i, (name, key) in enumerate(series):
            values = [r.get(key) if r.get(key) not in (None, "") else math.nan for r in rows]
            ax.bar([x + i * width for x in positions], values, width, label=name)
        ax.axhline(1.0, color="black", linewidth=1, label="floor (R/X + P/B)")
        ax.axhline(GOAL_WARM_X, color="grey", linestyle="--", linewidth=1, label=f"goal warm {GOAL_WARM_X}x")
        ax.axhline(GOAL_COLD_X, color="grey", linestyle=":", linewidth=1, label=f"goal first batch {GOAL_COLD_X:g}x")
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.9)
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks([x + width * (len(series) - 1) / 2 for x in positions])
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylabel("t / floor (log)")
        ax.set_title(f"Aggregate latency against the floor per path, X = {self.args.count}, engine defaults")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
        fig.savefig(os.path.join(self.args.out, "sweep-t-over-floor.png"), dpi=100)
        plt.close(fig)
        # Goodput shares.
        series = [("LongPipe (warm 1 MiB batches)" if max(self.args.sizes) == 1 << 20 else "LongPipe",
                   "longpipe_goodput_share")]
        series += [(f"iperf3 {c}", f"{c}_goodput_share") for c in self.args.congestion]
        series += [(f"SRT {m}" + (" (at the link rate)" if m == "paced" else ""), f"{srt_key(m)}_goodput_share")
                   for m in self.args.srt_modes]
        fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(rows) + 3), 5))
        width = 0.8 / len(series)
        for i, (name, key) in enumerate(series):
            values = [100 * r[key] if r.get(key) not in (None, "") else math.nan for r in rows]
            ax.bar([x + i * width for x in positions], values, width, label=name)
        ax.axhline(100 * TCP_PAYLOAD_SHARE, color="black", linewidth=1, label="TCP payload limit (1448/1500)")
        for loss, goal in GOAL_GOODPUT.items():
            ax.axhline(100 * goal, color="grey", linestyle="--" if loss == 1.0 else ":", linewidth=1,
                       label=f"goal at {loss:g} % loss: {100 * goal:.0f} %")
        ax.set_xticks([x + width * (len(series) - 1) / 2 for x in positions])
        ax.set_xticklabels(labels, fontsize=8)
        ax.set_ylim(0, 105)
        ax.set_ylabel("goodput, % of the link rate")
        ax.set_title("Goodput per path: LongPipe beside bulk TCP and SRT")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
        fig.savefig(os.path.join(self.args.out, "sweep-goodput.png"), dpi=100)
        plt.close(fig)
