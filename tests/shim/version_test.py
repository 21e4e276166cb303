#!/usr/bin/env python3
"""The project's version (project() in CMakeLists.txt) is the one everything shows: `longpipe
--version`, longpipe_version() of the library, its SONAME (the major number), and the unversioned
name liblongpipe.so that the checkout's commands preload names the same library.

Usage: version_test.py VERSION LONGPIPE_COMMAND LIBRARY
"""
import ctypes
import os
import re
import subprocess
import sys


def main():
    version, command, library = sys.argv[1:4]
    problems = []
    shown = subprocess.run([command, "--version"], check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    if shown != f"longpipe {version}":
        problems.append(f"`longpipe --version` prints {shown!r}, not 'longpipe {version}'")

    api = ctypes.CDLL(library)
    api.longpipe_version.restype = ctypes.c_char_p
    if api.longpipe_version().decode() != version:
        problems.append(f"longpipe_version() is {api.longpipe_version().decode()!r}, not {version!r}")
    if api.longpipe_protocol_version() <= 0:
        problems.append("longpipe_protocol_version() is not positive")

    dynamic = subprocess.run(["objdump", "-p", library], check=True, stdout=subprocess.PIPE, text=True).stdout
    soname = re.search(r"^\s*SONAME\s+(\S+)", dynamic, re.MULTILINE)
    wanted = f"liblongpipe.so.{version.split('.')[0]}"
    if not soname or soname.group(1) != wanted:
        problems.append(f"SONAME is {soname.group(1) if soname else None!r}, not {wanted!r}")
    folder = os.path.dirname(library)
    for name in ("liblongpipe.so", wanted):
        if os.path.realpath(os.path.join(folder, name)) != os.path.realpath(library):
            problems.append(f"{name} beside the library does not name it")

    for problem in problems:
        print(f"version_test: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"version {version}: longpipe --version, longpipe_version(), SONAME {wanted} and liblongpipe.so agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
