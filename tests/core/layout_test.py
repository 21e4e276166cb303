#!/usr/bin/env python3
"""The engine's folders stay layered: each folder of libshim/core includes only folders earlier in
LAYERS (libshim/README.md, "Files"), private headers by their path from libshim/core, and every
source file sits in one of these folders.

    layout_test.py SOURCE_DIR
"""

import pathlib
import re
import sys

LAYERS = ["wire", "config", "arq", "path", "congestion", "carrier", "stats", "security",
          "carrier/tcp", "carrier/datagram", "carrier/gateway", "session", "driver"]
PUBLIC = "include"


def main(root):
    core = pathlib.Path(root) / "libshim" / "core"
    public = {p.name for p in (core / PUBLIC).glob("*.h")}
    problems = []
    for path in sorted(core.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        folder = path.parent.relative_to(core).as_posix()
        if folder == PUBLIC:
            continue
        if folder not in LAYERS:
            problems.append(f"{path}: not in a layer's folder ({', '.join(LAYERS)})")
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = re.match(r'#include "([^"]+)"', line)
            if not match:
                continue
            name = match.group(1)
            where = f"{path.relative_to(core)}:{number}: {name}"
            if "/" not in name:
                if name not in public:
                    problems.append(f"{where}: a private header: include it by its path from libshim/core")
                continue
            used = name.rsplit("/", 1)[0]
            if used not in LAYERS or not (core / name).is_file():
                problems.append(f"{where}: no such header in the engine's folders")
            elif used != folder and LAYERS.index(used) > LAYERS.index(folder):
                problems.append(f"{where}: {folder}/ includes {used}/, which comes after it in LAYERS")
    for problem in problems:
        print(problem)
    print(f"layout_test: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    sys.exit(main(sys.argv[1]))
