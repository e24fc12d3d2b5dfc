#!/usr/bin/env python3
"""The summaries of 2026-12-03-h200-fp8-large-rows.md from the calls' CSVs.

picks-before.txt / picks-after.txt: gpu.DefaultTileFor(agmm, plain product, 132
SMs) per shape and dtype before and after the rule's changes (issue 56's set
and the held-out grid), printed by a throwaway Go test over the two versions of
kernels/gemm/gpu/defaults_tile.go. Per shape: each tile's geometric mean over
the rounds of its ratio to cuBLASLt (bf16: col 8; FP8: to cuBLASLt FP8, col 11).
"""
import collections
import csv
import glob
import math
import os

here = os.path.dirname(os.path.abspath(__file__))


def gm(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def picks(name):
    out = {}
    for line in open(os.path.join(here, name)):
        shape, dtype, tile = line.split()
        out[(shape, dtype)] = tile
    return out


def ratios(path):
    dtype = path.rsplit("gemmalone-", 1)[1][:-4]
    col = 7 if dtype == "bf16" else 10
    v = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in csv.reader(open(path)):
        if r and not r[0].startswith("#") and r[0] != "shape" and r[1].startswith("fused") and r[col]:
            v[r[0]][r[2]].append(float(r[col].split()[0]))
    return dtype, {s: {t: gm(a) for t, a in x.items()} for s, x in v.items()}


before, after = picks("picks-before.txt"), picks("picks-after.txt")
for call in ("call-a", "call-b", "call-c"):
    for path in sorted(glob.glob(os.path.join(here, call, "*", "gemmalone-*.csv"))):
        dtype, by_shape = ratios(path)
        rows = []
        for shape, y in sorted(by_shape.items()):
            new, old = after[(shape, dtype)], before[(shape, dtype)]
            if new not in y or old not in y:
                continue
            rows.append((shape, y[new], y[old], max(y.values())))
        if not rows:
            continue
        n = len(rows)
        print(f"{call}/{os.path.basename(os.path.dirname(path))} ({dtype}, {n} shapes with both picks timed): "
              f"new {gm([r[1] for r in rows]):.3f} old {gm([r[2] for r in rows]):.3f} best {gm([r[3] for r in rows]):.3f}; "
              f"new within 3% of best {sum(r[1] >= r[3] / 1.03 for r in rows)}, old {sum(r[2] >= r[3] / 1.03 for r in rows)}; "
              f"new >= 1.00x {sum(r[1] >= 1 for r in rows)}, old {sum(r[2] >= 1 for r in rows)}; "
              f"new >= old {sum(r[1] >= r[2] for r in rows)}")
