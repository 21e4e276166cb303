#!/usr/bin/env python3
"""liblongpipe.so exports only its documented interface (docs/engine/exports.md).

Every dynamic symbol it defines (nm -D --defined-only) must be one of:
  - a PVM function that libpvm3 defines too: the PVM front end interposes it;
  - an MPI C or Fortran entry point (MPI_*, mpi_*) that Open MPI's libraries define too: the MPI
    front end interposes it. Open MPI's own exports are the list of MPI functions, so a new entry
    point of the front end passes without editing this test, and a helper named MPI_something that
    is no MPI function does not. PMPI_* never passes: LongPipe calls Open MPI's profiling layer,
    it does not replace it;
  - a function of LongPipe's C API, declared in the public header (libshim/shared/include/longpipe.h);
  - the version node of the version script (LONGPIPE_0), which the linker defines.
Every one carries the version node, and the entry points the front ends cannot do without are
there (hidden by mistake, they would silently stop interposing).

Usage:
  exported_symbols_test.py --library LIB --header longpipe.h --pvm LIBPVM3 --mpi LIBMPI... [--self-check]
--self-check: check that the rules catch what they must: the library's real symbols with injected
wrong ones must fail, naming each injected one; the real ones with a required entry point removed
must fail too.
"""
import argparse
import re
import subprocess
import sys

VERSION_NODE = "LONGPIPE_0"
# Entry points without which LongPipe does not interpose PVM, MPI from C, or MPI from Fortran.
REQUIRED = ["pvm_send", "pvm_recv", "pvm_exit", "MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Finalize",
            "mpi_init_", "mpi_send_", "MPI_SEND", "mpi_send_f08_"]
# Names the rules must refuse (--self-check): LongPipe's C++, the C++ library's, Open MPI's
# profiling layer and internals, helpers named like a family, and an undeclared C API function.
INJECTED = ["_ZN2lp6Engine4stopEv", "_ZNSt6vectorIiSaIiEE9push_backEOi", "PMPI_Send", "ompi_mpi_comm_world",
            "MPI_Lp_route", "mpi_lp_route_", "pvm_lp_route", "longpipe_undocumented", "socket"]


def defined_symbols(path):
    """{name: version or None} of the dynamic symbols the object at `path` defines."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, _, version = fields[-1].partition("@")
        symbols[name] = version.lstrip("@") or None
    return symbols


def api_functions(header):
    """The functions LongPipe's public header declares."""
    with open(header, encoding="utf-8") as f:
        return set(re.findall(r"\b(longpipe_[a-z0-9_]+)\s*\(", f.read()))


def problems(symbols, api, pvm, mpi):
    """What is wrong with the exported `symbols` ({name: version}); empty if nothing."""
    found = []
    for name, version in sorted(symbols.items()):
        if name == VERSION_NODE:
            continue
        if name.startswith("PMPI_"):
            why = "Open MPI's profiling layer: LongPipe must not replace it"
        elif name.startswith(("MPI_", "mpi_")):
            why = None if name in mpi else "not an MPI function (Open MPI's libraries do not define it)"
        elif name.startswith("pvm_"):
            why = None if name in pvm else "not a PVM function (libpvm3 does not define it)"
        elif name.startswith("longpipe_"):
            why = None if name in api else "not declared in longpipe.h (the C API)"
        else:
            why = "not part of the interface (C++ internals, the C++ library's, or an undeclared name)"
        if why is None and version != VERSION_NODE:
            why = f"version {version!r}, not {VERSION_NODE} (libshim/shared/liblongpipe.map)"
        if why:
            found.append(f"{name}: {why}")
    for name in REQUIRED + sorted(api):
        if name not in symbols:
            found.append(f"{name}: missing (an entry point the library must export)")
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--library", required=True)
    parser.add_argument("--header", required=True)
    parser.add_argument("--pvm", required=True, help="libpvm3.so")
    parser.add_argument("--mpi", required=True, nargs="+", help="Open MPI's C and Fortran libraries")
    parser.add_argument("--self-check", action="store_true")
    args = parser.parse_args()

    symbols = defined_symbols(args.library)
    api = api_functions(args.header)
    pvm = set(defined_symbols(args.pvm))
    mpi = set()
    for path in args.mpi:
        mpi |= set(defined_symbols(path))
    if not api or not pvm or not mpi:
        sys.exit("exported_symbols_test: a reference list is empty (longpipe.h, libpvm3, Open MPI)")

    if args.self_check:
        failed = False
        injected = dict(symbols, **{name: VERSION_NODE for name in INJECTED})
        injected["MPI_Barrier"] = None  # right name, no version node
        reported = problems(injected, api, pvm, mpi)
        for name in INJECTED + ["MPI_Barrier"]:
            if not any(line.startswith(name + ":") for line in reported):
                print(f"self-check: the injected {name} was not reported", file=sys.stderr)
                failed = True
        without = {name: version for name, version in symbols.items() if name != "MPI_Send"}
        if "MPI_Send: missing (an entry point the library must export)" not in problems(without, api, pvm, mpi):
            print("self-check: a missing MPI_Send was not reported", file=sys.stderr)
            failed = True
        if failed:
            return 1
        print(f"self-check: all {len(INJECTED) + 1} injected names and the missing MPI_Send are reported")
        return 0

    found = problems(symbols, api, pvm, mpi)
    for line in found:
        print(f"{args.library}: {line}", file=sys.stderr)
    if found:
        print(f"{len(found)} problem(s) among {len(symbols)} exported symbols", file=sys.stderr)
        return 1
    families = {"PVM": "pvm_", "MPI C and Fortran": ("MPI_", "mpi_"), "C API": "longpipe_"}
    counts = ", ".join(f"{sum(n.startswith(p) for n in symbols)} {what}" for what, p in families.items())
    print(f"{len(symbols)} exported symbols, all in the interface: {counts}, and the version node {VERSION_NODE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
