#!/usr/bin/env python3
"""READMEs stay readable: the top-level README.md under 200 lines (what LongPipe is, install, the
two commands, your own program, the results table, links), every part's README.md at most 400.
A part that says more moves the rest to a page of its own (docs/, docs/engine/, tests/<part>/).

    readme_sizes_test.py SOURCE_DIR
"""

import pathlib
import sys

TOP_LIMIT = 199
PART_LIMIT = 400


def readmes(root):
    for path in sorted(root.rglob("README.md")):
        first = path.relative_to(root).parts[0]
        if first.startswith("build") or first.startswith("."):
            continue
        yield path


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[0]).resolve()
    problems, count = [], 0
    for path in readmes(root):
        count += 1
        lines = len(path.read_text(errors="replace").splitlines())
        limit = TOP_LIMIT if path.parent == root else PART_LIMIT
        if lines > limit:
            problems.append(f"{path.relative_to(root)}: {lines} lines, more than {limit}")
    for line in problems:
        print(line)
    if problems or count < 2:
        print(f"readme_sizes_test: {len(problems)} README(s) too long ({count} read)", file=sys.stderr)
        return 1
    print(f"readme_sizes_test: {count} README(s) within their limits")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
