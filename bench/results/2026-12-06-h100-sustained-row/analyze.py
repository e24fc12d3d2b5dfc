"""The sustained row-scale set (issue 56) against the same set in 0.2 s windows, shape by shape.

  python3 analyze.py SUSTAINED_CSV... --short SHORT_CSV...

SUSTAINED_CSV: gemmalone-e4m3_row.csv of run.sh's shards (2 s windows, two rounds, the second with
-kernel-outside). SHORT_CSV: the 0.2 s lean set's (2026-12-06-h100-fp8-method, set-e4m3_row-call4.tgz, whose
CSV holds call 1's rows too). Prints Markdown: the counts (at or above 1.00, at 1.05, median) of the
sustained shapes, the same shapes' counts in 0.2 s windows, the counts by round, by M, the rounds'
agreement, the shapes below 1.00, and the worst check error. A shape's ratio is the geometric mean of its
rounds, as bench/gemmalone_table.py takes it. Standard library only."""
import argparse
import math
import os
import re
import statistics
import sys
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402  (bench/gemmalone_table.py)

ERR = re.compile(r"^\d+x\d+x\d+,fused,[^,]*,[^,]*,([0-9.e+-]+),")


def geomean(xs: List[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def ratios(paths: List[str]) -> Dict[str, Tuple[str, List[float]]]:
    """shape -> the untuned tile and its ratio to cuBLASLt, a round each, in file order. Where a later file
    times another untuned tile for a shape (its pick moved with the rule), the later tile's rounds supersede
    the earlier ones."""
    out: Dict[str, Tuple[str, List[float]]] = {}
    for path in paths:
        for (shape, _dtype), s in gemmalone_table.read([path]).items():
            tiles = [t for t in s.ratios if s.ratios[t]]
            if len(tiles) != 1:
                continue
            rounds = list(s.ratios[tiles[0]])
            if shape in out and out[shape][0] == tiles[0]:
                rounds = out[shape][1] + rounds
            out[shape] = (tiles[0], rounds)
    return out


def worst_error(paths: List[str]) -> Tuple[float, int]:
    worst, wrong = 0.0, 0
    for p in paths:
        for line in open(p):
            if ",fused," in line and "WRONG" in line:
                wrong += 1
            elif m := ERR.match(line):
                worst = max(worst, float(m.group(1)))
    return worst, wrong


def counts(rs: List[float]) -> str:
    return (f"{sum(r >= 1.0 for r in rs)} / {sum(r >= 1.05 for r in rs)} / "
            f"{statistics.median(rs):.3f}" if rs else "-")


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sustained", nargs="+")
    ap.add_argument("--short", nargs="+", required=True)
    a = ap.parse_args(argv)
    tiled, short_tiled = ratios(a.sustained), ratios(a.short)
    long_ = {s: r for s, (_, r) in tiled.items()}
    # The 0.2 s figures of a shape count only where they timed the same tile.
    short = {s: r for s, (t, r) in short_tiled.items() if s in tiled and tiled[s][0] == t}
    shapes = sorted(long_, key=lambda s: tuple(int(x) for x in s.split("x")))
    both = [s for s in shapes if s in short]
    two = [s for s in shapes if len(long_[s]) == 2]
    worst, wrong = worst_error(a.sustained)
    print(f"{len(shapes)} shapes in 2 s windows ({len(two)} with two rounds), {len(both)} of them in the 0.2 s set; "
          f"check: {wrong} wrong, worst relative error {worst:.1e}\n")
    print("| shapes | windows | at or above 1.00 / at 1.05 / median |")
    print("|---|---|---|")
    print(f"| {len(shapes)} | 2 s, mean of the rounds | {counts([geomean(long_[s]) for s in shapes])} |")
    print(f"| {len(both)} | 0.2 s, the same shapes (mean of their rounds) | "
          f"{counts([geomean(short[s]) for s in both])} |")
    print(f"| {len(two)} | 2 s, round 1 only (reference around the tile) | {counts([long_[s][0] for s in two])} |")
    print(f"| {len(two)} | 2 s, round 2 only (the tile around the reference) | {counts([long_[s][1] for s in two])} |")
    print()
    print("| M | shapes | 2 s: at or above / at 1.05 / median | 0.2 s: the same | 0.2 s over 2 s (geometric mean) |")
    print("|---|---|---|---|---|")
    for m in sorted({int(s.split("x")[0]) for s in shapes}):
        ss = [s for s in both if int(s.split("x")[0]) == m]
        if not ss:
            continue
        over = geomean([geomean(short[s]) / geomean(long_[s]) for s in ss])
        print(f"| {m} | {len(ss)} | {counts([geomean(long_[s]) for s in ss])} | "
              f"{counts([geomean(short[s]) for s in ss])} | {over:.3f} |")
    print()
    gaps = sorted(abs(long_[s][1] / long_[s][0] - 1) for s in two)
    if gaps:
        print(f"Rounds' agreement in 2 s windows ({len(two)} shapes): |r2/r1 - 1| median {statistics.median(gaps):.1%}, "
              f"90th percentile {gaps[int(0.9 * (len(gaps) - 1))]:.1%}, largest {gaps[-1]:.1%}")
    moved = [(s, geomean(short[s]), geomean(long_[s])) for s in both]
    flip_down = [x for x in moved if x[1] >= 1.0 > x[2]]
    flip_up = [x for x in moved if x[2] >= 1.0 > x[1]]
    print(f"At or above in 0.2 s and below in 2 s: {len(flip_down)}; the other way: {len(flip_up)}\n")
    print("Below 1.00 in 2 s windows (shape: 2 s rounds -> mean; 0.2 s mean):\n")
    for s in shapes:
        r = geomean(long_[s])
        if r < 1.0:
            sr = f"{geomean(short[s]):.3f}" if s in short else "-"
            print(f"- {s}: {' '.join(f'{x:.3f}' for x in long_[s])} -> {r:.3f}; {sr}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
