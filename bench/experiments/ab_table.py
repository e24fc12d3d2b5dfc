"""Compares the two builds of an ab-gemmalone.sh run: per shape and tile,
each build's rounds (ratio to cuBLASLt, µs a call), B's mean time over A's
(below 1: B faster) and the relative errors of the float64 checks, which
must agree where both builds compute the same product.

    python3 bench/experiments/ab_table.py OUT/ab/A.csv OUT/ab/B.csv

The ratio is gemmalone's ratio to cuBLASLt of the same dtype: FP8's last
column (to cuBLASLt FP8 of the same scaling), else the ratio column. B/A
compares times, which the clock moves alike for both builds only because
the rounds alternate them.
"""
from __future__ import annotations

import argparse
import collections
import csv
import statistics
import sys
from pathlib import Path

Key = tuple[str, str]


def read(path: Path) -> dict[Key, list[tuple[float, float, str]]]:
    """(shape, tile) -> each round's (ratio, µs, rel_err) of our kernel's rows."""
    got: dict[Key, list[tuple[float, float, str]]] = collections.defaultdict(list)
    with path.open() as f:
        for row in csv.reader(f):
            if len(row) < 9 or row[0].startswith("#") or not row[1].startswith("fused"):
                continue
            fp8 = row[8].startswith("e4m3") and len(row) >= 11
            ratio = (row[10] if fp8 else row[7]).split()[0]
            got[(row[0], row[2])].append((float(ratio), float(row[5]), row[4]))
    return got


def table(a: dict[Key, list[tuple[float, float, str]]], b: dict[Key, list[tuple[float, float, str]]]) -> list[str]:
    """The markdown table's lines, shapes and tiles timed by both builds."""
    lines = ["| shape | tile | A ratio/µs | B ratio/µs | B/A µs | rel_err A, B |", "|---|---|---|---|---|---|"]
    for key in sorted(set(a) & set(b)):
        cells = [" ".join(f"{r:.3f}/{us:.1f}" for r, us, _ in x) for x in (a[key], b[key])]
        ratio = statistics.mean(us for _, us, _ in b[key]) / statistics.mean(us for _, us, _ in a[key])
        errs = [",".join(sorted({e for _, _, e in x})) for x in (a[key], b[key])]
        lines.append(f"| {key[0]} | {key[1]} | {cells[0]} | {cells[1]} | {ratio:.3f} | {errs[0]}; {errs[1]} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="build A's CSV")
    parser.add_argument("b", type=Path, help="build B's CSV")
    args = parser.parse_args(argv)
    a, b = read(args.a), read(args.b)
    if not set(a) & set(b):
        print("ab_table: no shape and tile timed by both builds", file=sys.stderr)
        return 1
    print("\n".join(table(a, b)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
