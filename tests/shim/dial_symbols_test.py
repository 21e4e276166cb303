#!/usr/bin/env python3
"""liblongpipe-dial.so exports exactly the socket functions it interposes, unversioned
(docs/engine/exports.md). Usage: dial_symbols_test.py LIBRARY"""
import subprocess
import sys

EXPECTED = {"connect", "accept", "accept4", "getpeername", "getsockname", "setsockopt", "getsockopt"}

out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], check=True, stdout=subprocess.PIPE,
                     text=True).stdout
names = {line.split()[-1] for line in out.splitlines() if line.strip()}
if names != EXPECTED:
    sys.exit(f"FAIL: liblongpipe-dial.so exports {sorted(names)}; expected exactly {sorted(EXPECTED)} "
             f"(extra: {sorted(names - EXPECTED)}, missing: {sorted(EXPECTED - names)})")
print("ok: liblongpipe-dial.so exports exactly the interposed socket functions, unversioned")
