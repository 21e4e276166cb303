"""The path grid of apps/bench/sweep: the default and quick points, a point's values, message sizes
and the command line (every option checked here, before anything is brought up)."""

import argparse
import os

from bench_common import BUILD_DIR
from sweep_srt import SRT_MODES

# The default grid: every delay (one way; RTT 20-600 ms) and every rate appears, 10 loss-free points,
# then the lossy points at geo (270 ms, 155 Mbit/s). --quick: a few of them.
DEFAULT_POINTS = ["10/50", "10/400", "50/155", "50/400", "135/10", "135/155", "270/50", "270/155", "270/400",
                  "300/155"]
DEFAULT_LOSSES = [1, 2, 5]
DEFAULT_LOSS_AT = "270/155"
QUICK_POINTS = ["10/50", "50/400", "270/155", "270/155/1"]


class Point:
    """One path: one-way delay (ms), rate (Mbit/s), loss (%), the same in both directions."""

    def __init__(self, text):
        fields = text.split("/")
        if len(fields) not in (2, 3):
            raise ValueError(f"'{text}' is not DELAY/RATE[/LOSS]")
        try:
            self.delay_ms, self.rate_mbit = float(fields[0]), float(fields[1])
            self.loss_pct = float(fields[2]) if len(fields) == 3 else 0.0
        except ValueError:
            raise ValueError(f"'{text}' is not DELAY/RATE[/LOSS] (numbers)") from None
        if self.delay_ms < 0 or self.rate_mbit <= 0 or not 0 <= self.loss_pct < 100:
            raise ValueError(f"'{text}': delay >= 0 ms, rate > 0 Mbit/s, loss in [0, 100) %")

    @property
    def name(self):
        loss = f"/{self.loss_pct:g}%" if self.loss_pct else ""
        return f"{self.delay_ms:g}ms/{self.rate_mbit:g}M{loss}"

    @property
    def rtt_ms(self):
        return 2 * self.delay_ms


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20}
    text = text.strip()
    scale = units.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit() or int(digits) < 1:
        raise ValueError(f"'{text}' is not a size (bytes, K or M suffix)")
    return int(digits) * scale


def size_label(size):
    for unit, scale in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="longpipe bench --sweep",
        description="Path sweep: per path point (one-way delay x rate x loss), lp-perf's cold first batch "
        "and warm median against the floor at each size, and iperf3 cubic/bbr goodput on the same link, with the "
        "engine's defaults (no LONGPIPE_* path setting).")
    parser.add_argument("--points", help="comma list DELAY/RATE[/LOSS]: one-way ms / Mbit/s / percent "
                        f"(default: {','.join(DEFAULT_POINTS)}, plus --losses at --loss-at)")
    parser.add_argument("--delays", help="comma list of one-way delays (ms); with --rates: their cross product "
                        "instead of the default loss-free points")
    parser.add_argument("--rates", help="comma list of rates (Mbit/s), for --delays")
    parser.add_argument("--losses", default=",".join(f"{x:g}" for x in DEFAULT_LOSSES),
                        help="loss percentages measured at --loss-at (default 1,2,5; '' for none)")
    parser.add_argument("--loss-at", default=DEFAULT_LOSS_AT, help="DELAY/RATE of the lossy points (default 270/155)")
    parser.add_argument("--quick", action="store_true", help=f"points {','.join(QUICK_POINTS)}, iperf3 10 s")
    parser.add_argument("--sizes", default="1K,1M", help="message sizes P (default 1K,1M)")
    parser.add_argument("--count", type=int, default=100, help="messages per batch X (default 100)")
    parser.add_argument("--batches", type=int, default=3,
                        help="batches per size, the fresh process's first one included (default 3, at least 2)")
    parser.add_argument("--iperf-seconds", type=float,
                        help="iperf3 duration per congestion control (default 20; quick 10; 0: no iperf3)")
    parser.add_argument("--congestion", default="cubic,bbr", help="iperf3 congestion controls (default cubic,bbr)")
    parser.add_argument("--srt-seconds", type=float,
                        help="SRT transfer's duration per mode (default: --iperf-seconds; 0: no SRT)")
    parser.add_argument("--srt-modes", default="file,paced",
                        help="SRT modes: file (SRT's file congestion control), paced (paced at the link rate); "
                        "default file,paced")
    parser.add_argument("--point-budget", type=float, default=420, help="seconds per point (default 420)")
    parser.add_argument("--carrier", choices=("tcp", "udp", "auto"),
                        help="LONGPIPE_CARRIER for lp-perf at both ends (default: none set, the engine's default); "
                        "the one engine setting the sweep passes on, to compare the carriers on the same grid")
    parser.add_argument("--tune-hosts", action="store_true", help="netem/wan up --tune-hosts (default: stock hosts)")
    parser.add_argument("--instance", default=os.environ.get("LP_WAN_INSTANCE") or "bench-sweep",
                        help="netem/wan instance (default $LP_WAN_INSTANCE or 'bench-sweep')")
    parser.add_argument("--out", help="results directory (default <build>/bench-results/sweep)")
    parser.add_argument("--no-plots", action="store_true", help="no PNG plots")
    args = parser.parse_args(argv)
    try:
        if args.points:
            points = [Point(p) for p in args.points.split(",") if p]
        elif args.quick:
            points = [Point(p) for p in QUICK_POINTS]
        else:
            if args.delays or args.rates:
                if not (args.delays and args.rates):
                    parser.error("--delays and --rates go together")
                points = [Point(f"{d}/{r}") for d in args.delays.split(",") if d for r in args.rates.split(",") if r]
            else:
                points = [Point(p) for p in DEFAULT_POINTS]
            at = Point(args.loss_at)
            points += [Point(f"{at.delay_ms:g}/{at.rate_mbit:g}/{loss}") for loss in args.losses.split(",") if loss]
        args.sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    except ValueError as error:
        parser.error(str(error))
    if not points or not args.sizes:
        parser.error("no points or no sizes")
    names = [p.name for p in points]
    if len(set(names)) != len(names):
        parser.error(f"a point is listed twice: {names}")
    args.points = points
    args.congestion = [c for c in args.congestion.split(",") if c]
    if args.iperf_seconds is None:
        args.iperf_seconds = 10 if args.quick else 20
    if args.srt_seconds is None:
        args.srt_seconds = args.iperf_seconds
    args.srt_modes = [m for m in args.srt_modes.split(",") if m]
    unknown = [m for m in args.srt_modes if m not in SRT_MODES]
    if unknown:
        parser.error(f"--srt-modes: unknown {unknown} (file, paced)")
    if args.count < 1 or args.batches < 2:
        parser.error("--count must be at least 1 and --batches at least 2 (the first batch and a warm one)")
    if args.iperf_seconds < 0 or args.srt_seconds < 0 or args.point_budget <= 0:
        parser.error("--iperf-seconds and --srt-seconds must be >= 0 and --point-budget > 0")
    args.out = args.out or os.path.join(BUILD_DIR, "bench-results", "sweep")
    return args
