#!/usr/bin/env python3
"""docs/mpi-calls.md lists every MPI call LongPipe interposes, and only those.

The interposed calls are read from the sources:
  C        libshim/mpi/*.cpp: `LP_EXPORT <type> MPI_Xxx(`, and the invocations of a macro whose body
           defines `LP_EXPORT ... MPI_##NAME` (`LP_SEND(Send, ...)` -> MPI_Send)
  Fortran  libshim/mpi/fortran/*.cpp: the table lines `LP_FORTRAN_MPI(send, SEND, ...)` and
           `LP_FORTRAN_CALL(...)` -> MPI_SEND
The page's tables of interposed calls are the ones whose header starts `| call | languages | path |`:
one row per call, its languages `C`, `Fortran` or `C, Fortran`, its path one of PATHS. The table of
calls left to Open MPI (header `| not interposed |`) must name none of the interposed calls.

    mpi_calls_test.py SOURCE_DIR            check docs/mpi-calls.md against the sources
    mpi_calls_test.py SOURCE_DIR --list     print the interposed calls, a table row for each missing one
"""

import pathlib
import re
import sys

PAGE = "docs/mpi-calls.md"
PATHS = ("LongPipe", "two-level", "Open MPI", "bookkeeping")
INTERPOSED_HEADER = re.compile(r"^\|\s*call\s*\|\s*languages\s*\|\s*path\s*\|")
NOT_INTERPOSED_HEADER = re.compile(r"^\|\s*not interposed\s*\|")
NAME = re.compile(r"`(MPI_[A-Za-z0-9_]+)`")

EXPORTED = re.compile(r"\bLP_EXPORT\b[^(;{]*?\b(MPI_[A-Za-z0-9_]+)\s*\(")
DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)\((\w+)")
FORTRAN_LINE = re.compile(r"^\s*LP_FORTRAN_\w+\(\s*\w+\s*,\s*(\w+)\s*,")


def logical_lines(text):
    """Source lines with backslash continuations joined (macro bodies become one line)."""
    out, pending = [], ""
    for line in text.splitlines():
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def interposed_c(mpi_dir):
    names = set()
    for path in sorted(mpi_dir.glob("*.cpp")):
        lines = logical_lines(path.read_text(errors="replace"))
        macros = {}  # macro name -> prefix of the function it defines from its first argument
        for line in lines:
            define = DEFINE.match(line)
            if define:
                macro, parameter = define.groups()
                if "LP_EXPORT" in line and f"MPI_##{parameter}" in line:
                    macros[macro] = "MPI_"
                continue
            for match in EXPORTED.finditer(line):
                names.add(match.group(1))
        for line in lines:
            if DEFINE.match(line):
                continue
            for macro, prefix in macros.items():
                for match in re.finditer(rf"^\s*{macro}\(\s*(\w+)\s*[,)]", line):
                    names.add(prefix + match.group(1))
    return names


def interposed_fortran(fortran_dir):
    names = set()
    for path in sorted(fortran_dir.glob("*.cpp")):
        for line in logical_lines(path.read_text(errors="replace")):
            match = FORTRAN_LINE.match(line)
            if match:
                names.add("MPI_" + match.group(1).upper())
    return names


def page_tables(page):
    """(rows of the interposed-call tables as (line number, cells), names in the not-interposed table)."""
    rows, not_interposed = [], []
    kind = None
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if not line.startswith("|"):
            kind = None
            continue
        if INTERPOSED_HEADER.match(line):
            kind = "interposed"
            continue
        if NOT_INTERPOSED_HEADER.match(line):
            kind = "not"
            continue
        if re.match(r"^\|[\s:|-]+\|\s*$", line):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if kind == "interposed":
            rows.append((number, cells))
        elif kind == "not":
            not_interposed += [(number, name) for name in NAME.findall(cells[0])]
    return rows, not_interposed


def languages_of(cell):
    parts = {part.strip() for part in cell.split(",")}
    return parts if parts and parts <= {"C", "Fortran"} else None


def check(root):
    mpi_dir = root / "libshim" / "mpi"
    c_names = interposed_c(mpi_dir)
    fortran_names = interposed_fortran(mpi_dir / "fortran")
    page = root / PAGE
    rows, not_interposed = page_tables(page)
    problems = []
    if not c_names or not fortran_names:
        problems.append(f"found no interposed calls under {mpi_dir} (C: {len(c_names)}, Fortran: "
                        f"{len(fortran_names)}): has the way they are defined changed?")
    listed = {}  # upper-case name -> (name, languages)
    for number, cells in rows:
        names = NAME.findall(cells[0]) if cells else []
        where = f"{page}:{number}"
        if len(names) != 1 or len(cells) < 4:
            problems.append(f"{where}: a row names one call (`MPI_Xxx`) and has 4 cells: {cells}")
            continue
        name = names[0]
        languages = languages_of(cells[1])
        if languages is None:
            problems.append(f"{where}: {name}: languages must be C, Fortran or 'C, Fortran', not {cells[1]!r}")
            continue
        if not cells[2].startswith(PATHS):
            problems.append(f"{where}: {name}: path must start with one of {', '.join(PATHS)}: {cells[2]!r}")
        if name.upper() in listed:
            problems.append(f"{where}: {name} has a row already")
        listed[name.upper()] = (name, languages)
        if "C" in languages and name not in c_names:
            problems.append(f"{where}: {name}: the table says C, but no C function of that name is interposed")
        if "Fortran" in languages and name.upper() not in fortran_names:
            problems.append(f"{where}: {name}: the table says Fortran, but libshim/mpi/fortran has no entry point for it")
    for name in sorted(c_names):
        entry = listed.get(name.upper())
        if not entry or "C" not in entry[1]:
            problems.append(f"{page}: {name} is interposed in C (libshim/mpi) but has no row saying C")
    for name in sorted(fortran_names):
        entry = listed.get(name)
        if not entry or "Fortran" not in entry[1]:
            problems.append(f"{page}: {name} has a Fortran entry point (libshim/mpi/fortran) but no row saying Fortran")
    interposed_upper = {n.upper() for n in c_names} | fortran_names
    for number, name in not_interposed:
        if name.upper() in interposed_upper:
            problems.append(f"{page}:{number}: {name} is interposed now: move it to a table of interposed calls")
    return problems, c_names, fortran_names, listed


def main(argv):
    if not argv or len(argv) > 2 or (len(argv) == 2 and argv[1] != "--list"):
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[0])
    problems, c_names, fortran_names, listed = check(root)
    if len(argv) == 2:
        everything = {n.upper(): n for n in c_names}
        for n in fortran_names:
            everything.setdefault(n, n)
        for upper in sorted(everything):
            languages = ", ".join(x for x, there in (("C", upper in {n.upper() for n in c_names}),
                                                      ("Fortran", upper in fortran_names)) if there)
            mark = "" if upper in listed else "   <- missing; add: | `%s` | %s | PATH | WHAT |" % (everything[upper], languages)
            print(f"{everything[upper]:32} {languages}{mark}")
    for line in problems:
        print(line)
    if problems:
        print(f"mpi_calls_test: {len(problems)} problem(s); the rows follow the format at the top of {PAGE}",
              file=sys.stderr)
        return 1
    print(f"mpi_calls_test: {len(listed)} rows match {len(c_names)} C and {len(fortran_names)} Fortran calls")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
