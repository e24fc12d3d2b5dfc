"""The tables of 2026-12-04-h200-large-tiles.md from the calls' CSVs (standard library only).

    python3 bench/results/2026-12-04-h200-large-tiles/analyze.py

Ratios are cuBLASLt's best algorithm's time over the tile's, each tile between cuBLASLt right before
and after it (bin/gemmalone); FP8 rows use the ratio to cuBLASLt FP8 (row scales for e4m3_row).
"""
from __future__ import annotations

import collections
import csv
import glob
import itertools
import math
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
T_CSV = os.path.join(HERE, "..", "2026-12-03-h200-streamk", "call-t", "gemmalone-bf16.csv")


def rows(path: str) -> list[dict[str, str]]:
    lines = [line for line in open(path) if not line.startswith("#")]
    header, body = lines[0], [line for line in lines[1:] if not line.startswith("shape,")]
    return list(csv.DictReader([header] + body))


def ratios(paths: list[str], fp8: bool) -> dict[tuple[str, str], list[float]]:
    """{(shape, tile): [ratio per round]} of every fused row."""
    key = "ratio_to_cublaslt_fp8" if fp8 else "ratio_to_cublaslt"
    out: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for p in paths:
        for r in rows(p):
            if r["impl"] == "cublaslt":
                continue
            if r["rel_err"].startswith("WRONG"):
                raise SystemExit(f"{p}: wrong product: {r}")
            try:
                v = float(r[key].split()[0])
            except ValueError:
                continue
            out[(r["shape"], r["config"])].append(v)
    return out


def gm(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def matrix(title: str, d: dict[tuple[str, str], list[float]]) -> None:
    shapes = list(dict.fromkeys(s for s, _ in d))
    tiles = sorted({t for _, t in d})
    print(f"\n### {title}\n")
    print("| shape | " + " | ".join(tiles) + " |")
    print("|---" * (len(tiles) + 1) + "|")
    for s in shapes:
        cells = [("/".join(f"{x:.3f}" for x in d[(s, t)]) if d.get((s, t)) else "-") for t in tiles]
        print(f"| {s} | " + " | ".join(cells) + " |")
    common = [t for t in tiles if all(d.get((s, t)) for s in shapes[: len(shapes) // 2])]
    full = [s for s in shapes if all(d.get((s, t)) for t in common)]
    print(f"\nGeometric mean over the {len(full)} shapes where every tile timed on most ran, all rounds"
          " (a tile timed only as some shape's untuned pick is left out):\n")
    for t in common:
        print(f"- {t}: {gm([x for s in full for x in d[(s, t)]]):.4f}")


def group_pairs(d: dict[tuple[str, str], list[float]]) -> None:
    """Each tile against itself with another swizzle group: the mean of
    each shape's rounds, their ratio, its geometric mean over shapes."""
    shapes = list(dict.fromkeys(s for s, _ in d))
    tiles = sorted({t for _, t in d})
    base = lambda t: ":".join(p for p in t.split(":") if not p.startswith("g"))
    print("\n| tile | group | over group | geometric mean | per shape |\n|---|---|---|---|---|")
    for a, b in itertools.combinations(tiles, 2):
        if base(a) != base(b):
            continue
        rs = [gm(d[(s, b)]) / gm(d[(s, a)]) for s in shapes if d.get((s, a)) and d.get((s, b))]
        ga = [p for p in a.split(":") if p.startswith("g")][0]
        gb = [p for p in b.split(":") if p.startswith("g")][0]
        print(f"| {base(a)} | {gb} | {ga} | {gm(rs):.4f} ({sum(r > 1 for r in rs)} of {len(rs)} ahead) | "
              + " ".join(f"{r:.3f}" for r in rs) + " |")


def whole_set(title: str, d: dict[tuple[str, str], list[float]], old: dict[tuple[str, str], list[float]] | None) -> None:
    by_shape = {s: (v[0], t) for (s, t), v in d.items()}
    vals = sorted(v for v, _ in by_shape.values())
    print(f"\n### {title}\n")
    print(f"{len(vals)} shapes: at or above 1.00x on {sum(v >= 1 for v in vals)}, 1.05x on "
          f"{sum(v >= 1.05 for v in vals)}, median {statistics.median(vals):.3f}")
    by_m = collections.defaultdict(list)
    for s, (v, _) in by_shape.items():
        by_m[int(s.split("x")[0])].append(v)
    print("\n| M | shapes | at or above 1.00x | median | lowest |\n|---|---|---|---|---|")
    for m in sorted(by_m):
        rs = sorted(by_m[m])
        print(f"| {m} | {len(rs)} | {sum(x >= 1 for x in rs)} | {statistics.median(rs):.3f} | {rs[0]:.3f} |")
    print("\nLowest ten: " + "; ".join(f"{s} {t} {v:.3f}" for s, (v, t) in sorted(by_shape.items(), key=lambda x: x[1][0])[:10]))
    if old is None:
        return
    old_by = {s: (v[0], t) for (s, t), v in old.items()}
    common = [s for s in by_shape if s in old_by]
    vo = sorted(old_by[s][0] for s in common)
    print(f"\nCall T (2026-12-03, the rule then) on the same {len(common)} shapes: at or above 1.00x on "
          f"{sum(v >= 1 for v in vo)}, 1.05x on {sum(v >= 1.05 for v in vo)}, median {statistics.median(vo):.3f}")
    same = [s for s in common if by_shape[s][1] == old_by[s][1]]
    changed = [s for s in common if by_shape[s][1] != old_by[s][1]]
    print(f"- same pick on {len(same)}: today over then {gm([by_shape[s][0] / old_by[s][0] for s in same]):.4f} (the runs' drift)")
    print(f"- new pick on {len(changed)}: today over then {gm([by_shape[s][0] / old_by[s][0] for s in changed]):.4f}\n")
    print("| shape | then | ratio | today | ratio |\n|---|---|---|---|---|")
    for s in changed:
        print(f"| {s} | {old_by[s][1]} | {old_by[s][0]:.3f} | {by_shape[s][1]} | {by_shape[s][0]:.3f} |")


def main() -> None:
    a = os.path.join(HERE, "call-a")
    matrix("Call A, bf16 (two rounds)", ratios([f"{a}/bf16/gemmalone-56/gemmalone-bf16.csv"], False))
    matrix("Call A, e4m3 (two rounds, ratio to cuBLASLt FP8)", ratios([f"{a}/e4m3/gemmalone-56/gemmalone-e4m3.csv"], True))
    b = ratios([os.path.join(HERE, "call-b/bf16/gemmalone-56/gemmalone-bf16.csv")], False)
    matrix("Call B, bf16, held out (three rounds)", b)
    group_pairs(b)
    old = ratios([T_CSV], False)
    whole_set("Call C, bf16, the untuned tile on the whole set (one round)",
              ratios([os.path.join(HERE, "call-c/c/set/gemmalone-56-1of1/gemmalone-bf16.csv")], False), old)
    whole_set("Call D, e4m3_row, the untuned tile on the whole set (one round, two shards)",
              ratios(sorted(glob.glob(os.path.join(HERE, "call-d/d*/gemmalone-56-*/gemmalone-e4m3_row.csv"))), True), None)


if __name__ == "__main__":
    main()
