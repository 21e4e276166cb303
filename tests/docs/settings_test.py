#!/usr/bin/env python3
"""docs/configuration.md is what the settings registry generates, and the registry declares every
LONGPIPE_* name that LongPipe's sources, scripts and tests use.

    settings_test.py SOURCE_DIR LONGPIPE_CONFIG        check both
    settings_test.py SOURCE_DIR LONGPIPE_CONFIG --write rewrite docs/configuration.md from the registry

The names used are the LONGPIPE_[A-Z0-9_]+ words of every file git tracks, but for the Markdown
pages (prose, history), docs/ (results, plots) and the unit tests of unknown names, which misspell
names on purpose. NOT_SETTINGS lists the words that are not environment variables, MISSPELT the
misspellings of the integration tests.
"""

import pathlib
import re
import subprocess
import sys

PAGE = "docs/configuration.md"
NAME = re.compile(r"(?<![A-Za-z0-9_])LONGPIPE_[A-Z0-9_]*[A-Z0-9]\b")
DECLARED = re.compile(r"^\| `(LONGPIPE_[A-Z0-9_]+)` \|", re.MULTILINE)

# Words that look like settings but are not read from the environment.
NOT_SETTINGS = {
    "LONGPIPE_0": "the version node of the library's version script",
    "LONGPIPE_H": "the C API header's include guard",
    "LONGPIPE_API": "the C API's visibility macro",
    "LONGPIPE_VERSION": "the compile definition of the version",
    "LONGPIPE_SANITIZE": "a CMake option",
    "LONGPIPE_WERROR": "a CMake option",
    "LONGPIPE_FUZZ": "a CMake option",
    "LONGPIPE_FUZZ_TEST_RUNS": "a CMake cache variable",
    "LONGPIPE_CATCH_ARGS": "a CMake variable",
    "LONGPIPE_THREAD_TEST_TARGETS": "a CMake global property",
    "LONGPIPE_X": "a placeholder in a comment",
    "LONGPIPE_COMMAND": "an argument's name in a test's usage text",
    "LONGPIPE_GROFF": "a CMake variable",
    "LONGPIPE_NAME": "a placeholder in usage and error texts",
}

# Names that the integration tests of the unknown-name check misspell on purpose.
MISSPELT = {"LONGPIPE_CARIER", "LONGPIPE_WINDOW_MESAGES"}

# Unit tests of the unknown-name check: they misspell many names on purpose.
MISSPELLING_TESTS = {
    "tests/core/config_test.cpp",
    "tests/core/settings_registry_test.cpp",
    "tests/core/config_errors_itest.cmake",
    "tests/daemon/config_test.cpp",
}


def generated(tool):
    return subprocess.run([tool, "--markdown"], check=True, capture_output=True, text=True).stdout


def used_names(root):
    files = subprocess.run(["git", "-C", str(root), "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    used = {}
    for relative in files:
        if relative.endswith(".md") or relative.startswith("docs/") or relative in MISSPELLING_TESTS:
            continue
        path = root / relative
        if not path.is_file():
            continue
        for name in NAME.findall(path.read_text(errors="replace")):
            used.setdefault(name, relative)
    return used


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root, tool = pathlib.Path(sys.argv[1]), sys.argv[2]
    page = generated(tool)
    if sys.argv[3:] == ["--write"]:
        (root / PAGE).write_text(page)
        return 0
    problems = []
    current = (root / PAGE).read_text() if (root / PAGE).is_file() else ""
    if current != page:
        problems.append(f"{PAGE} differs from `longpipe-config --markdown` (regenerate it: "
                        f"tests/docs/settings_test.py SOURCE_DIR LONGPIPE_CONFIG --write)")
    declared = set(DECLARED.findall(page))
    for name, where in sorted(used_names(root).items()):
        if name not in declared and name not in NOT_SETTINGS and name not in MISSPELT:
            problems.append(f"{name} (in {where}) is not declared in the settings registry")
    for name in sorted(declared & NOT_SETTINGS.keys()):
        problems.append(f"{name} is declared but listed in NOT_SETTINGS")
    for problem in problems:
        print(problem)
    print(f"{len(declared)} settings declared; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
