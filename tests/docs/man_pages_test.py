#!/usr/bin/env python3
"""The manual pages in docs/man/ render without a warning and name themselves right.

For every page NAME.SECTION in docs/man/:
  - `groff -man -ww -z` prints nothing (every groff warning enabled; groff exits 0 on warnings,
    so any output is a failure);
  - its .TH names NAME in capitals and SECTION;
  - its NAME section starts with NAME;
  - rendered at 78 columns, as man(1) does on an 80-column terminal, no line is wider than 80
    (a long example line would run off the terminal);
  - every page it cites with .BR name (section) among LongPipe's own pages exists.
The pages listed in PAGES must all be there, and docs/man/ holds no other page. longpipe(7)
names every LONGPIPE_* setting the library reads: the engine's settings table
(libshim/core/config/settings.cpp), the names config.cpp accepts beside it, and every full
"LONGPIPE_..." name in a string of the library's sources (the front ends' own settings), less the
tools' (TOOL_VARIABLES). longpipe(1) has an item for every command `./longpipe --help` lists.

    man_pages_test.py SOURCE_DIR [--groff PATH]
"""

import pathlib
import re
import subprocess
import sys

PAGES = {"longpipe.1", "longpipe.7", "longpiped.8"}
OWN = {"longpipe", "longpiped"}
TH = re.compile(r'^\.TH\s+(?:"([^"]*)"|(\S+))\s+(?:"([^"]*)"|(\S+))')
TOOL_VARIABLES = {"LONGPIPE_WAN", "LONGPIPE_BUILD_DIR"}
SETTING = re.compile(r'(?:\b(?:timer|size|on_off)\(\s*|Setting\{\s*)"([A-Z][A-Z0-9_]+)"')
ACCEPTED = re.compile(r'bare == "([A-Z][A-Z0-9_]+)"')
LITERAL = re.compile(r'"(LONGPIPE_[A-Z0-9_]*[A-Z0-9])')
CITED = re.compile(r"^\.BR\s+(\S+)\s+\(([0-9][A-Za-z0-9]*)\)")
WIDTH = 80


def check(page, groff):
    problems = []
    name, section = page.stem, page.suffix[1:]
    text = page.read_text()
    lines = text.splitlines()

    run = subprocess.run([groff, "-man", "-ww", "-z", str(page)], capture_output=True, text=True)
    if run.returncode != 0 or run.stdout or run.stderr:
        problems.append(f"groff -man -ww -z: exit {run.returncode}: {(run.stdout + run.stderr).strip()}")

    th = [line for line in lines if line.startswith(".TH")]
    if len(th) != 1:
        problems.append(f"{len(th)} .TH lines, expected 1")
    else:
        match = TH.match(th[0])
        if not match:
            problems.append(f"unreadable .TH line: {th[0]!r}")
        else:
            title = match.group(1) or match.group(2)
            th_section = match.group(3) or match.group(4)
            if title != name.upper():
                problems.append(f".TH names {title!r}, expected {name.upper()!r}")
            if th_section != section:
                problems.append(f".TH names section {th_section!r}, expected {section!r} (the file's)")

    try:
        after_name = lines[lines.index(".SH NAME") + 1]
        if not after_name.startswith(name.replace("-", "\\-") + " \\- "):
            problems.append(f"the NAME section reads {after_name!r}, expected '{name} \\- ...'")
    except (ValueError, IndexError):
        problems.append("no .SH NAME section")

    rendered = subprocess.run([groff, "-man", "-Tascii", "-P-cbou", "-rLL=78n", str(page)],
                              capture_output=True, text=True).stdout
    for number, line in enumerate(rendered.splitlines(), 1):
        if len(line) > WIDTH:
            problems.append(f"rendered line {number} is {len(line)} columns wide: {line.strip()!r}")

    for line in lines:
        cited = CITED.match(line)
        if cited and cited.group(1) in OWN and f"{cited.group(1)}.{cited.group(2)}" not in PAGES:
            problems.append(f"cites {cited.group(1)}({cited.group(2)}), which is not one of {sorted(PAGES)}")
    return [f"{page}: {problem}" for problem in problems]


def settings(root):
    """Every LONGPIPE_* name the library reads, from its sources."""
    config = root / "libshim" / "core" / "config"
    names = {"LONGPIPE_" + name for name in SETTING.findall((config / "settings.cpp").read_text())}
    if not names:
        raise SystemExit("man_pages_test: found no setting in libshim/core/config/settings.cpp: "
                         "teach SETTING the settings table's new form")
    names |= {"LONGPIPE_" + name for name in ACCEPTED.findall((config / "config.cpp").read_text())}
    for path in sorted((root / "libshim").rglob("*")):
        if path.suffix in (".cpp", ".h", ".c"):
            names |= {name for name in LITERAL.findall(path.read_text(errors="replace"))
                      if len(name) > len("LONGPIPE_") + 1}
    return names - TOOL_VARIABLES


def commands(root):
    """The commands the longpipe script's usage lists (its lines under 'Commands:')."""
    text = (root / "longpipe").read_text()
    usage = text[text.index("Commands:"):]
    usage = usage[:usage.index("\nEOF")]
    found = set(re.findall(r"^  ([a-z][a-z-]*)\b", usage, re.MULTILINE))
    if not found:
        raise SystemExit("man_pages_test: found no command in the longpipe script's usage")
    return found


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[0])
    groff = argv[argv.index("--groff") + 1] if "--groff" in argv else "groff"
    folder = root / "docs" / "man"
    try:
        subprocess.run([groff, "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print(f"man_pages_test: cannot run {groff} (Debian package groff-base, in debian-packages.txt)",
              file=sys.stderr)
        return 1
    found = {path.name for path in folder.iterdir() if re.fullmatch(r"[\w.-]+\.[1-9]", path.name)}
    problems = [f"{folder}: missing page {missing}" for missing in sorted(PAGES - found)]
    problems += [f"{folder}: {extra} is not listed in man_pages_test.py's PAGES (nor installed)"
                 for extra in sorted(found - PAGES)]
    for name in sorted(found & PAGES):
        problems += check(folder / name, groff)
    if "longpipe.1" in found:
        page = (folder / "longpipe.1").read_text()
        problems += [f"{folder / 'longpipe.1'}: no item for the command '{command}' (./longpipe --help lists it)"
                     for command in sorted(commands(root))
                     if not re.search(rf'^\.TP\n\.B[IR]?\s+"?{re.escape(command)}[\s"]', page, re.MULTILINE)]
    if "longpipe.7" in found:
        page = (folder / "longpipe.7").read_text().replace("\\-", "-")
        page = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", page)  # font changes: \fB, \fP, \f(CW, \f[B]
        problems += [f"{folder / 'longpipe.7'}: does not name {name}, which the library reads"
                     for name in sorted(settings(root)) if not re.search(rf"\b{name}\b", page)]
    for line in problems:
        print(line)
    if problems:
        print(f"man_pages_test: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"man_pages_test: {len(found)} page(s) render cleanly with groff -man -ww")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
