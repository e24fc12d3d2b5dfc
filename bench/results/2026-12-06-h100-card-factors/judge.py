"""The rule of run.sh (beside this; written before the run), applied to its timing CSVs:

  python3 judge.py shapes.txt gemmalone-bf16.csv...

shapes.txt: "MxNxK OLD NEW" a line. Prints a Markdown table a shape (OLD's and NEW's ratio to cuBLASLt, the
geometric mean of their rounds, and NEW over OLD) and the verdicts of Q0 and Q1. Standard library only
(bench/gemmalone_table.py reads the CSVs)."""
import os
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import fmt_ratio as fmt, geomean, over  # noqa: E402


def main(argv: List[str]) -> int:
    planned: Dict[str, Tuple[str, str]] = {}
    for line in open(argv[0]):
        if line.strip():
            shape, old, new = line.split()
            planned[shape] = (old, new)
    shapes = {s.shape: s for (_, dt), s in gemmalone_table.read(argv[1:]).items() if dt == "bf16"}
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
            by_change[f"{old.split(':')[0]}{':pp' if old.endswith(':pp') else ''} -> {new}"].append(g)
        print(f"| {shape} | {old} | {new} | {fmt(s.ratio(old))} | {fmt(s.ratio(new))} | {fmt(g)} |")
    print()
    print(f"Q0 correct and the planned rule: {'yes' if not problems else 'NO: ' + '; '.join(sorted(problems))}")
    if problems:
        print("verdict: nothing else counts")
        return 0
    at_least = sum(g >= 1.0 for g in gains)
    gm = geomean(gains)
    worst = min(gains) if gains else None
    ok = len(gains) == len(planned) and at_least >= 8 and gm is not None and gm >= 1.02 and worst is not None \
        and worst >= 0.95
    print(f"Q1 NEW over OLD, {len(gains)} of {len(planned)} shapes: at or above on {at_least}, geometric mean {fmt(gm)}, "
          f"worst {fmt(worst)} (rule: all timed, >= 8, >= 1.02, none below 0.95) -> {'passes' if ok else 'does not pass'}")
    for change, xs in sorted(by_change.items()):
        print(f"- {change}: {len(xs)} shapes, at or above on {sum(x >= 1.0 for x in xs)}, geometric mean {fmt(geomean(xs))}")
    print(f"verdict: {'the patch goes to main' if ok else 'the patch stays off main'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
