"""The rule of run.sh (beside this; written before the run), applied to its timing CSVs:

  python3 judge.py shapes.txt gemmalone-*.csv...

shapes.txt: "DTYPE MxNxK OLD NEW" a line (DTYPE e4m3: timed with row scales, e4m3_row). Per dtype, prints a
Markdown table a shape (OLD's and NEW's ratio to cuBLASLt, the geometric mean of their rounds, and NEW over
OLD) and the verdicts of Q0 and Q1; each dtype's part of the patch is judged on its own shapes. Standard
library only (bench/gemmalone_table.py reads the CSVs)."""
import math
import os
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import fmt_ratio as fmt, geomean, over  # noqa: E402

TIMED_AS = {"e4m3": "e4m3_row", "bf16": "bf16"}
PART = {"e4m3": "the H100's FP8 factor for 128x128:pp (0.889)", "bf16": "the H100's bf16 factor for 128x160 (0.879)"}
MIN_TIMED = 8


def judge(dtype: str, planned: Dict[str, Tuple[str, str]], shapes: Dict[str, "gemmalone_table.Shape"]) -> None:
    print(f"## {dtype} (timed as {TIMED_AS[dtype]}): {PART[dtype]}")
    print("| shape | OLD (main) | NEW (the patch) | OLD / cuBLASLt | NEW / cuBLASLt | NEW / OLD |")
    print("|---|---|---|---|---|---|")
    gains: List[float] = []
    by_change: Dict[str, List[float]] = defaultdict(list)
    problems: List[str] = []
    for shape, (old, new) in planned.items():
        s = shapes.get(shape)
        if s is None:
            print(f"| {shape} | {old} | {new} | not timed | | |")
            continue
        if s.default != old:
            problems.append(f"{shape}: gemmalone's default {s.default}, planned {old}")
        problems += [f"{shape} {t}: {why}" for t, why in s.failed.items()]
        g = over(s.ratio(new), s.ratio(old))
        if g is not None:
            gains.append(g)
            by_change[f"-> {new}"].append(g)
        print(f"| {shape} | {old} | {new} | {fmt(s.ratio(old))} | {fmt(s.ratio(new))} | {fmt(g)} |")
    print()
    print(f"Q0 correct and the planned rule: {'yes' if not problems else 'NO: ' + '; '.join(sorted(problems))}")
    if problems:
        print(f"verdict ({dtype}): nothing else counts; this part stays off main\n")
        return
    if len(gains) < MIN_TIMED:
        print(f"verdict ({dtype}): {len(gains)} shapes timed, fewer than {MIN_TIMED}: no verdict; this part stays "
              "off main\n")
        return
    at_least = sum(g >= 1.0 for g in gains)
    need = math.ceil(2 * len(gains) / 3)
    gm = geomean(gains)
    worst = min(gains)
    ok = at_least >= need and gm is not None and gm >= 1.02 and worst >= 0.95
    print(f"Q1 NEW over OLD, {len(gains)} of {len(planned)} shapes: at or above on {at_least}, geometric mean "
          f"{fmt(gm)}, worst {fmt(worst)} (rule: >= {need}, two thirds of those timed; >= 1.02; none below 0.95) "
          f"-> {'passes' if ok else 'does not pass'}")
    for change, xs in sorted(by_change.items()):
        print(f"- {change}: {len(xs)} shapes, at or above on {sum(x >= 1.0 for x in xs)}, geometric mean "
              f"{fmt(geomean(xs))}")
    print(f"verdict ({dtype}): {'this part goes to main' if ok else 'this part stays off main'}\n")


def main(argv: List[str]) -> int:
    planned: Dict[str, Dict[str, Tuple[str, str]]] = defaultdict(dict)
    for line in open(argv[0]):
        if line.strip():
            dtype, shape, old, new = line.split()
            planned[dtype][shape] = (old, new)
    by = gemmalone_table.read(argv[1:])
    for dtype in ("e4m3", "bf16"):
        shapes = {s.shape: s for (_, dt), s in by.items() if dt == TIMED_AS[dtype]}
        judge(dtype, planned[dtype], shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
