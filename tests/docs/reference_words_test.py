#!/usr/bin/env python3
"""Reference documentation carries no history: no date, issue number, run label or commit hash.
Nor does the source of the library, the gateway, the apps and the link emulator, nor the scripts
of the apps, of netem and ./longpipe: comments say why, not when or in which run (hex constants
there are not commit hashes, so that rule is left out for sources).

History is git's and CHANGELOG.md's; a published result lives in docs/results/<date>-<commit>/,
and a link to such a set is the one place a date and a commit may appear. The files checked are
listed here by name: a part joins the list once its documentation is reference, not a notebook.

    reference_words_test.py SOURCE_DIR          check the listed files under SOURCE_DIR
    reference_words_test.py --files FILE...     check these files (to try the rules on any text)
    reference_words_test.py --sample FILE       succeed only if every line after FILE's first blank
                                                line has a finding (the rules' own test)
"""

import pathlib
import re
import sys

CHECKED = [
    "README.md",
    "apps/bench/README.md",
    "libshim/README.md",
    "libshim/mpi/README.md",
    "libshim/mpi/fortran/README.md",
    "apps/cfd-demo/README.md",
    "docs/*.md",
    "docs/engine/*.md",
    "daemon/README.md",
    "libshim/pvm/README.md",
    "netem/README.md",
    "apps/*/README.md",
]
# Source files checked with every rule but the commit hash's.
CHECKED_SOURCES = [
    "libshim/core/**/*.h",
    "libshim/core/**/*.cpp",
    "daemon/**/*.h",
    "daemon/**/*.cpp",
    "libshim/mpi/**/*.h",
    "libshim/mpi/**/*.cpp",
    "libshim/pvm/**/*.h",
    "libshim/pvm/**/*.cpp",
    "libshim/shared/**/*.h",
    "libshim/shared/**/*.cpp",
    "apps/**/*.h",
    "apps/**/*.cpp",
    "apps/**/*.c",
    "netem/*.h",
    "netem/*.cpp",
]

# Scripts (files that start with "#!") under these patterns, and Python modules, are sources too.
CHECKED_SCRIPTS = ["longpipe", "netem/*", "apps/**/*"]

# A link to a published result set names its date and commit on purpose.
RESULT_SET = re.compile(r"(docs/)?results/\d{4}-\d{2}-\d{2}-[0-9a-f]{7,40}/?")

RULES = [
    ("a date", re.compile(r"\b(19|20)\d\d-[01]\d-[0-3]\d\b")),
    ("a time of day", re.compile(r"\b[0-2]?\d:[0-5]\d(:[0-5]\d)?(\s*-\s*[0-2]?\d:[0-5]\d)?\s*UTC\b")),
    ("a date", re.compile(r"\b\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* (19|20)\d\d\b")),
    ("an issue number", re.compile(r"\b(issue|bug|ticket|PR|pull request)s? #?\d+", re.IGNORECASE)),
    ("an issue number", re.compile(r"(?<![\w&/])#\d+\b")),
    ("a run label", re.compile(r"\bsession[- _]?\d+\b", re.IGNORECASE)),
    ("a run label", re.compile(r"\b(newest|latest|last|earlier|previous) run\b", re.IGNORECASE)),
    ("a run label", re.compile(r"\bthe run (before|after)\b", re.IGNORECASE)),
    ("a run label", re.compile(r"\b(before that|since then|until then)\b", re.IGNORECASE)),
    ("a run label", re.compile(r"\brun [A-H]\b(?![\w-])")),
    ("a commit hash", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")),
]


SOURCE_RULES = [(what, rule) for what, rule in RULES if what != "a commit hash"]


def findings(path, rules=RULES):
    out = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        line = RESULT_SET.sub("docs/results/SET/", line)
        for what, rule in rules:
            match = rule.search(line)
            if match:
                out.append(f"{path}:{number}: {what}: {match.group(0)!r}")
    return out


def listed(root, patterns):
    files = []
    for pattern in patterns:
        matched = sorted(root.glob(pattern))
        if not matched:
            raise SystemExit(f"reference_words_test: {pattern} matches no file under {root}")
        files += matched
    return files


def scripts(root):
    found = []
    for pattern in CHECKED_SCRIPTS:
        for path in sorted(root.glob(pattern)):
            if not path.is_file() or path.suffix in (".h", ".cpp", ".c", ".md"):
                continue  # C and C++ are listed in CHECKED_SOURCES, Markdown in CHECKED
            with path.open("rb") as head:
                if path.suffix == ".py" or head.read(2) == b"#!":
                    found.append(path)
    if not found:
        raise SystemExit(f"reference_words_test: no script under {root}")
    return found


def sample(path):
    """Every line after the first blank one must be caught."""
    lines = path.read_text().splitlines()
    start = lines.index("") + 1
    caught = {int(line.split(":")[1]) for line in findings(path)}
    missed = [n for n in range(start + 1, len(lines) + 1) if lines[n - 1].strip() and n not in caught]
    for n in missed:
        print(f"{path}:{n}: not caught: {lines[n - 1]!r}")
    return 1 if missed or start >= len(lines) else 0


def main(argv):
    if len(argv) == 2 and argv[0] == "--sample":
        return sample(pathlib.Path(argv[1]))
    sources = []
    if len(argv) >= 2 and argv[0] == "--files":
        files = [pathlib.Path(name) for name in argv[1:]]
    elif len(argv) == 1:
        files = listed(pathlib.Path(argv[0]), CHECKED)
        sources = listed(pathlib.Path(argv[0]), CHECKED_SOURCES) + scripts(pathlib.Path(argv[0]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    problems = [line for path in files for line in findings(path)]
    problems += [line for path in sources for line in findings(path, SOURCE_RULES)]
    for line in problems:
        print(line)
    if problems:
        print(f"reference_words_test: {len(problems)} line(s) carry history; move it to git, "
              "CHANGELOG.md or docs/results/", file=sys.stderr)
        return 1
    print(f"reference_words_test: {len(files) + len(sources)} file(s) clean")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
