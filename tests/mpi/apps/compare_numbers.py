#!/usr/bin/env python3
"""compare_numbers.py PLAIN LONGPIPE --relative R --absolute A

Compares two normalized transcripts line by line and word by word: the same number of lines and
of words on each line; words that are integers or not numbers must be equal; two floating-point
words a, b must satisfy |a - b| <= A + R * max(|a|, |b|) (R = A = 0: equal values). Used where a
program prints sums whose last printed digit may change with the order of the additions (a
reduction's algorithm may differ with LongPipe); everything else stays exact. Exits 1 naming the
first difference.
"""
import argparse
import re
import sys

INTEGER = re.compile(r"[+-]?\d+")


def number(word):
    try:
        return float(word.replace("D", "E").replace("d", "e"))
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plain")
    parser.add_argument("longpipe")
    parser.add_argument("--relative", type=float, default=0.0)
    parser.add_argument("--absolute", type=float, default=0.0)
    arguments = parser.parse_args()
    with open(arguments.plain) as file:
        plain = file.read().splitlines()
    with open(arguments.longpipe) as file:
        longpipe = file.read().splitlines()
    if not plain:
        sys.exit(f"FAIL: {arguments.plain} is empty")
    if len(plain) != len(longpipe):
        sys.exit(f"FAIL: {len(plain)} lines without LongPipe, {len(longpipe)} with it")
    inexact = 0
    for line, (a_line, b_line) in enumerate(zip(plain, longpipe), start=1):
        a_words, b_words = a_line.split(), b_line.split()
        if len(a_words) != len(b_words):
            sys.exit(f"FAIL: line {line} differs:\n- {a_line}\n+ {b_line}")
        for a, b in zip(a_words, b_words):
            if a == b:
                continue
            x, y = number(a), number(b)
            if x is None or y is None or INTEGER.fullmatch(a) or INTEGER.fullmatch(b):
                sys.exit(f"FAIL: line {line} differs ({a} / {b}):\n- {a_line}\n+ {b_line}")
            if abs(x - y) > arguments.absolute + arguments.relative * max(abs(x), abs(y)):
                sys.exit(f"FAIL: line {line}: {a} / {b} beyond the tolerance (relative "
                         f"{arguments.relative:g}, absolute {arguments.absolute:g}):\n- {a_line}\n+ {b_line}")
            inexact += 1
    print(f"== {len(plain)} lines match; {inexact} number(s) within the tolerance, not identical",
          file=sys.stderr)


if __name__ == "__main__":
    main()
