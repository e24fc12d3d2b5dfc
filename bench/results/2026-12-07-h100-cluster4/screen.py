#!/usr/bin/env python3
"""Q1 of the cluster4 run.sh: each :cl4 tile over its :cl2 twin, per dtype and off/on 32-byte sectors.

Reads the run's CSVs (skips '#' lines; rows with impl 'fused'), takes each tile's ratio to cuBLASLt (bf16) or
cuBLASLt FP8 alone (e4m3_row) as the geometric mean of its two rounds, and prints per shape the five tiles' ratios,
per group the geometric mean of cl4 over cl2 for each tile size, and on how many shapes a cl4 tile is the best of
the five by 2% or more. Usage: screen.py DIR (the unpacked cl4/ folder).
"""
import csv
import glob
import math
import os
import sys
from collections import defaultdict

ELEM = {"bf16": 2, "e4m3_row": 1}


def ratio(row: dict) -> float:
    if row["dtype"] == "e4m3_row":
        return float(row["ratio_to_cublaslt_fp8"])
    return float(row["ratio_to_cublaslt"].split()[0])


def main(root: str) -> None:
    rounds: dict = defaultdict(list)
    wrong = 0
    for path in sorted(glob.glob(os.path.join(root, "t*", "gemmalone-56", "gemmalone-*.csv"))):
        with open(path) as f:
            lines = [ln for ln in f if not ln.startswith("#")]
        for row in csv.DictReader(lines):
            if row["impl"] != "fused":
                continue
            if "WRONG" in ",".join(row.values()) or row["us"] in ("", "-"):
                wrong += 1
                continue
            rounds[(row["dtype"], row["shape"], row["config"])].append(ratio(row))
    gm = {key: math.exp(sum(map(math.log, v)) / len(v)) for key, v in rounds.items()}
    shapes = sorted({(d, s) for d, s, _ in gm}, key=lambda x: (x[0], [int(v) for v in x[1].split("x")]))
    sizes = ["128x128:s6:c2:g4", "128x256:s4:c2:g8"]
    groups: dict = defaultdict(lambda: defaultdict(list))
    leads: dict = defaultdict(int)
    print(f"fused rows not timed or WRONG: {wrong}; rounds per tile: {sorted({len(v) for v in rounds.values()})}")
    print("| dtype | shape | sectors | " + " | ".join(f"{s}:cl2 | :cl4" for s in sizes) + " | cl4 best by 2% |")
    print("|---|---|---|" + "---|---|" * len(sizes) + "---|")
    for d, s in shapes:
        k = int(s.split("x")[2])
        off = (k * ELEM[d]) % 32 != 0
        sect = "off" if off else "on"
        cells = []
        for size in sizes:
            a, b = gm.get((d, s, size + ":cl2")), gm.get((d, s, size + ":cl4"))
            cells += [f"{a:.3f}" if a else "-", f"{b:.3f}" if b else "-"]
            if a and b:
                groups[(d, sect)][size].append(b / a)
        mine = {c: r for (dd, ss, c), r in gm.items() if dd == d and ss == s}
        best4 = max((r for c, r in mine.items() if c.endswith(":cl4")), default=0)
        rest = max((r for c, r in mine.items() if not c.endswith(":cl4")), default=0)
        lead = best4 >= 1.02 * rest
        leads[(d, sect)] += lead
        print(f"| {d} | {s} | {sect} | " + " | ".join(cells) + f" | {'yes' if lead else 'no'} |")
    print()
    print("| dtype | sectors | shapes | " + " | ".join(f"{s} cl4/cl2 (gm)" for s in sizes) + " | cl4 best by 2% |")
    print("|---|---|---|" + "---|" * len(sizes) + "---|")
    for key in sorted(groups):
        g = groups[key]
        n = max(len(v) for v in g.values())
        cells = [f"{math.exp(sum(map(math.log, g[s])) / len(g[s])):.3f}" if g[s] else "-" for s in sizes]
        print(f"| {key[0]} | {key[1]} | {n} | " + " | ".join(cells) + f" | {leads[key]} of {n} |")


if __name__ == "__main__":
    main(sys.argv[1])
