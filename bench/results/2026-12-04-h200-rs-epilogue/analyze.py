"""The tables of 2026-12-04-h200-rs-epilogue.md from the calls' CSVs.

For each gemmalone CSV given: per shape, the plain default tile's time and the
cost of its two reduce-scatter rows ("rs": rows by TMA stores; "rs-regs": by
each warp's own stores) over it, in the same process, one figure per round.

    python3 analyze.py call-g/e4m3.csv call-g/e4m3-e.csv ...
"""
from __future__ import annotations

import collections
import csv
import sys


def rows(path: str) -> dict[str, dict[str, list[float]]]:
    by: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path) as f:
        for r in csv.reader(f):
            if len(r) > 5 and r[1] == "fused" and r[5] not in ("-", ""):
                by[r[0]][r[3]].append(float(r[5]))
    return by


def main() -> None:
    for path in sys.argv[1:]:
        print(f"== {path}")
        for shape, kinds in sorted(rows(path).items()):
            plain = kinds.get("0", [])
            cells = [f"{shape:18s} plain " + " ".join(f"{u:.1f}" for u in plain)]
            for kind in ("rs", "rs-regs"):
                cost = [f"{100 * (u / p - 1):+.1f}%" for u, p in zip(kinds.get(kind, []), plain)]
                cells.append(f"{kind} " + " ".join(cost))
            print(" | ".join(cells))


if __name__ == "__main__":
    main()
