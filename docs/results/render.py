#!/usr/bin/env python3
"""Regenerate the results table of the top-level README from docs/results/.

Each folder `docs/results/<date>-<commit>/` is one published result set: the benchmark's CSV
(named after its kind: `pvm-geo.csv`, `mpi-geo.csv`, `collectives.csv`, `sweep.csv`,
`sweep-beside-tcp-srt.csv`, `cfd-demo.csv`), `command`, `machine` and `conditions`. For each kind
the table uses the newest set: folders sort by the date in their name, then by the `published:`
line of their `conditions` (the publishing commit's time); two sets that tie are an error.

    docs/results/render.py            rewrite the table between the README's markers
    docs/results/render.py --check    exit 1 (with a diff) if the README's table is not what
                                      this script would write

Only the standard library: it runs wherever python3 does.
"""

import argparse
import csv
import difflib
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
BEGIN = "<!-- results:begin -->"
END = "<!-- results:end -->"
SET_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-([0-9a-f]{7,40})$")


class RenderError(Exception):
    pass


def sets_of_kind(results, kind):
    """Every set holding `<kind>.csv`, oldest first: by the date in the folder's name, then by the
    `published:` line of its `conditions` (the publishing commit's UTC time)."""
    found = []
    for folder in results.iterdir():
        match = SET_NAME.match(folder.name)
        if match and (folder / f"{kind}.csv").is_file():
            published = read_fields(folder / "conditions").get("published", "")
            found.append(((match.group(1), published), folder))
    keys = [key for key, _ in found]
    for key in set(keys):
        if keys.count(key) > 1:
            raise RenderError(f"two sets of kind {kind} published at {key}: the newest is ambiguous")
    return [folder for _, folder in sorted(found)]


def newest(results, kind):
    found = sets_of_kind(results, kind)
    if not found:
        raise RenderError(f"no result set of kind {kind} in {results}")
    return found[-1]


def read_rows(folder, kind):
    with open(folder / f"{kind}.csv", newline="") as f:
        return list(csv.DictReader(f))


def read_fields(path):
    """`name: value` lines of a machine or conditions file."""
    fields = {}
    for line in path.read_text().splitlines():
        name, sep, value = line.partition(":")
        if sep:
            fields[name.strip()] = value.strip()
    return fields


def num(value, digits=3):
    """A measured value with `digits` significant figures, as the benchmark tables print them."""
    x = float(value)
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        text = f"{x:.0f}"
    return text


def ratio(value):
    x = float(value)
    return f"{x:.2f}x" if x < 10 else f"{num(x)}x"


def size_name(size):
    size = int(size)
    for unit, name in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} B"


def span(values, unit="", fmt=num):
    low, high = fmt(min(values)), fmt(max(values))
    return f"{low}{unit}" if low == high else f"{low}-{high}{unit}"


def pvm_rows(folder):
    rows = read_rows(folder, "pvm-geo")
    by = {(r["route"], r["size_bytes"]): r for r in rows}

    def cell(route, size):
        r = by.get((route, size))
        if r is None or not r["status"].startswith("ok"):
            return "skipped (budget)"
        return f"{num(float(r['median_t_s']) * 1e3)} ms ({ratio(r['median_over_floor'])})"

    out = []
    for size in ("1024", "65536", "1048576"):
        lp = by[("longpipe", size)]
        out.append([
            "PVM `lp-bench`, warm median per message",
            size_name(size),
            f"{num(float(lp['floor_t_s']) * 1e3)} ms",
            cell("longpipe", size),
            f"pvmd route {cell('default', size)}; PvmRouteDirect {cell('direct', size)}",
        ])
    return out


def mpi_rows(folder):
    rows = read_rows(folder, "mpi-geo")
    by = {(r["route"], r["size_bytes"]): r for r in rows}

    def cell(route, size, first=False):
        r = by.get((route, size))
        if r is None or not r["status"].startswith("ok"):
            return "skipped (budget)"
        text = f"{num(float(r['median_t_s']) * 1e3)} ms ({ratio(r['median_over_floor'])})"
        if first:
            text += f", first batch {num(float(r['first_t_s']) * 1e3)} ms"
        return text

    out = []
    for size in ("1024", "16384", "65536", "1048576"):
        lp = by[("mpi-longpipe", size)]
        out.append([
            "MPI `lp-mpi-bench`, warm median per message",
            size_name(size),
            f"{num(float(lp['floor_t_s']) * 1e3)} ms",
            cell("mpi-longpipe", size, first=True),
            f"Open MPI {cell('mpi-default', size)}; limits raised by hand {cell('mpi-tuned', size)}",
        ])
    return out


COLLECTIVES = (("barrier", "0", "Barrier"), ("bcast", "4194304", "Bcast 4 MiB"),
               ("allreduce", "8", "Allreduce 8 B"), ("allreduce", "4194304", "Allreduce 4 MiB"),
               ("gather", "65536", "Gather 64 KiB"), ("alltoall", "65536", "Alltoall 64 KiB"))


def collective_rows(folder):
    rows = read_rows(folder, "collectives")
    out = []
    for op, size, name in COLLECTIVES:
        points = [r for r in rows if r["operation"] == op and r["bytes"] == size]
        if not points:
            raise RenderError(f"{folder.name}: no {op} of {size} bytes")
        lp = [float(r["longpipe_ms"]) for r in points]
        lpx = [float(r["longpipe_x_limit"]) for r in points]
        om = [float(r["openmpi_ms"]) for r in points]
        omx = [float(r["openmpi_x_limit"]) for r in points]
        out.append([
            "MPI collectives, 4 ranks per site, time per call",
            name,
            f"{num(points[0]['limit_ms'])} ms",
            f"{span(lp, ' ms')} ({span(lpx, 'x', lambda v: f'{v:.2f}')})",
            f"Open MPI alone {span(om, ' ms')} ({span(omx, 'x', lambda v: f'{v:.2f}')})",
        ])
    return out


def sweep_rows(folder, compare_folders):
    rows = {r["point"]: r for r in read_rows(folder, "sweep")}
    compare = {}
    for other in compare_folders:  # oldest first: a newer set wins a point
        for r in read_rows(other, "sweep-beside-tcp-srt"):
            compare[r["point"]] = r

    def share(r, name):
        value = r.get(f"{name}_goodput_share", "")
        return f"{float(value) * 100:.0f} %" if value else "not measured"

    out = []
    geo = [p for p, r in rows.items()
           if float(r["one_way_ms"]) == 270 and float(r["rate_mbit"]) == 155]
    for point in sorted(geo, key=lambda p: float(rows[p]["loss_pct"])):
        r = rows[point]
        loss = float(r["loss_pct"])
        other = compare.get(point)
        without = "not measured" if other is None else (
            f"iperf3 cubic {share(other, 'cubic')}, bbr {share(other, 'bbr')}; "
            f"SRT file {share(other, 'srt')}, SRT paced at the link rate {share(other, 'srt_paced')}")
        out.append([
            "path sweep, 1 MiB messages, goodput",
            f"geo, {loss:g} % loss",
            f"{num(r['1M_floor_ms'])} ms",
            f"{float(r['longpipe_goodput_share']) * 100:.0f} % of the link; warm {num(r['1M_warm_ms'])} ms "
            f"({ratio(r['1M_warm_x'])}), first batch {ratio(r['1M_first_x'])}",
            without,
        ])
    return out


def cfd_rows(folder):
    rows = read_rows(folder, "cfd-demo")
    openmpi = {(r["api"], r["grid"]): r for r in rows if r["route"] == "openmpi"}
    out = []
    for r in rows:
        if r["route"] != "longpipe":
            continue
        start = "cold" if r["start"] == "cold" else "known path"
        lp = f"{ratio(r['median_over_bound'])} the bound"
        if r["first_frame_s"]:
            lp += f", first frame {r['first_frame_s']} s"
        other = openmpi.get((r["api"], r["grid"]))
        without = f"Open MPI alone {ratio(other['median_over_bound'])}" if other and start == "cold" else ""
        out.append([
            "CFD demo, median frame latency",
            f"{r['api']} {r['grid']}, {start}",
            f"{r['bound_s']} s",
            lp,
            without,
        ])
    return out


def conditions_line(label, folder):
    cond = read_fields(folder / "conditions")
    machine = read_fields(folder / "machine")
    parts = [cond.get("link", ""), f"{cond.get('hosts', '').split(' (')[0]} hosts"]
    if "load" in machine:
        parts.append(f"load: {machine['load']}")
    rel = folder.relative_to(ROOT).as_posix()
    return f"- {label}: {'; '.join(p for p in parts if p)} ([data]({rel}/))"


def render(results):
    pvm = newest(results, "pvm-geo")
    mpi = newest(results, "mpi-geo")
    coll = newest(results, "collectives")
    sweep = newest(results, "sweep")
    compare = sets_of_kind(results, "sweep-beside-tcp-srt")
    cfd = newest(results, "cfd-demo")

    rows = pvm_rows(pvm) + mpi_rows(mpi) + collective_rows(coll) + sweep_rows(sweep, compare) + cfd_rows(cfd)
    lines = [
        "<!-- generated by docs/results/render.py from the newest set of each kind; do not edit -->",
        "",
        "| benchmark | point | floor or bound | LongPipe | without LongPipe |",
        "|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(cell or "-" for cell in row) + " |" for row in rows]
    lines += ["", "Conditions (each set's `command`, `machine` and `conditions` files say more):", ""]
    lines.append(conditions_line("PVM", pvm))
    lines.append(conditions_line("MPI", mpi))
    lines.append(conditions_line("collectives", coll))
    lines.append(conditions_line("path sweep", sweep))
    for other in compare:
        lines.append(conditions_line("path sweep beside iperf3 and SRT", other))
    lines.append(conditions_line("CFD demo", cfd))
    return "\n".join(lines) + "\n"


def split_readme(text, path):
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise RenderError(f"{path}: needs one {BEGIN} line before one {END} line")
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    return head + BEGIN + "\n", body.lstrip("\n"), END + tail


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="fail if the README's table differs from the generated one")
    parser.add_argument("--readme", type=pathlib.Path, default=ROOT / "README.md")
    parser.add_argument("--results", type=pathlib.Path, default=HERE)
    args = parser.parse_args()
    try:
        text = args.readme.read_text()
        head, body, tail = split_readme(text, args.readme)
        table = render(args.results.resolve())
    except (OSError, KeyError, ValueError, RenderError) as e:
        print(f"render.py: {e}", file=sys.stderr)
        return 2
    if args.check:
        if body == table:
            return 0
        sys.stdout.writelines(difflib.unified_diff(
            body.splitlines(True), table.splitlines(True), "README.md (table)", "generated"))
        print("render.py: the README's results table is out of date: run docs/results/render.py",
              file=sys.stderr)
        return 1
    if body != table:
        args.readme.write_text(head + table + tail)
    return 0


if __name__ == "__main__":
    sys.exit(main())
