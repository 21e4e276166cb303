#!/usr/bin/env python3
"""mumps_laplace.py input M | check M OUTPUT...

input: writes to stdout a MUMPS simpletest input (N, NZ, the entries I J A, the right-hand side)
for the 5-point Laplacian of an M x M grid (N = M*M unknowns, assembled unsymmetric storage) whose
exact solution is x(i) = (i-1) mod 7 + 1: integer entries, so the right-hand side is exact.
check: every OUTPUT (dsimpletest's standard output) holds a solution within TOLERANCE of that exact
one, and the solutions of all OUTPUTs agree within TOLERANCE of each other. MUMPS's assembly order
may follow message arrival, so the last bits of the solution may differ between runs.
"""
import sys

# The solution's entries are at most 7; this 2D Laplacian's condition number is below M*M, so the
# rounding error of a backward-stable solve stays many orders of magnitude below this bound.
TOLERANCE = 1e-9


def exact(n):
    return [float(i % 7 + 1) for i in range(n)]


def write_input(m):
    n = m * m
    entries = []
    for r in range(m):
        for c in range(m):
            i = r * m + c
            entries.append((i, i, 4))
            for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                if 0 <= rr < m and 0 <= cc < m:
                    entries.append((i, rr * m + cc, -1))
    x = exact(n)
    b = [0.0] * n
    for i, j, v in entries:
        b[i] += v * x[j]
    lines = [str(n), str(len(entries))]
    lines += [f"{i + 1} {j + 1} {v}.0" for i, j, v in entries]
    lines += [f"{v:.1f}" for v in b]
    print("\n".join(lines))


def solution(path):
    with open(path) as file:
        text = file.read()
    if "Solution is" not in text:
        sys.exit(f"FAIL: {path}: no 'Solution is' line")
    words = text.split("Solution is", 1)[1].split("Entering")[0].split()
    return [float(w) for w in words]


def check(m, outputs):
    n = m * m
    want = exact(n)
    solutions = [solution(path) for path in outputs]
    for path, x in zip(outputs, solutions):
        if len(x) != n:
            sys.exit(f"FAIL: {path}: {len(x)} solution entries, expected {n}")
        worst = max(abs(a - b) for a, b in zip(x, want))
        if worst > TOLERANCE:
            sys.exit(f"FAIL: {path}: solution off the exact one by {worst:g} (tolerance {TOLERANCE:g})")
        print(f"== {path}: {n} entries, largest error {worst:.2g}", file=sys.stderr)
    for path, x in zip(outputs[1:], solutions[1:]):
        gap = max(abs(a - b) for a, b in zip(x, solutions[0]))
        if gap > TOLERANCE:
            sys.exit(f"FAIL: {path} and {outputs[0]} differ by {gap:g} (tolerance {TOLERANCE:g})")


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("input", "check"):
        sys.exit(__doc__.splitlines()[0])
    m = int(sys.argv[2])
    if sys.argv[1] == "input":
        write_input(m)
    else:
        check(m, sys.argv[3:])


if __name__ == "__main__":
    main()
