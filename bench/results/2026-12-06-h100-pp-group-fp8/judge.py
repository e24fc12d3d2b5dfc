"""The rule of run.sh (beside this; written before the run), applied to its timing CSV:

  python3 judge.py gemmalone-e4m3_row.csv

Prints a Markdown table a shape (each tile's ratio to cuBLASLt FP8, the geometric mean of its rounds) and the
verdicts of Q0-Q2. Standard library only (bench/gemmalone_table.py reads the CSV)."""
import os
import sys
from typing import Dict, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import geomean  # noqa: E402

GROUPS = (4, 8, 16, 32)
TILES: Dict[int, str] = {g: f"128x128:s6:c2:g{g}:pp" for g in GROUPS}


def fmt(x: Optional[float]) -> str:
    return f"{x:.3f}" if x is not None else "-"


def main(path: str) -> int:
    shapes = sorted(gemmalone_table.read([path]).values(), key=lambda s: s.mnk)
    wrong = sorted({f"{s.shape} {t}: {why}" for s in shapes for t, why in s.failed.items()})
    print("| shape | default (its tile) | " + " | ".join(f"g{g}" for g in GROUPS) + " | best of g16, g32 / g4 | it / default |")
    print("|---|---|" + "---|" * len(GROUPS) + "---|---|")
    # The larger group for Q2: the one of g16 and g32 with the higher geometric mean over the shapes timed for both.
    both = [s for s in shapes if s.ratio(TILES[16]) and s.ratio(TILES[32])]
    big = max((16, 32), key=lambda g: geomean([s.ratio(TILES[g]) for s in both]) or 0.0) if both else 16
    q1, q2 = [], []
    for s in shapes:
        r = {g: s.ratio(TILES[g]) for g in GROUPS}
        rd = s.ratio(s.default) if s.default else None
        over_g4 = r[big] / r[4] if r[big] and r[4] else None
        vs_default = r[big] / rd if r[big] and rd else None
        if over_g4:
            q1.append(over_g4)
        if vs_default:
            q2.append(vs_default)
        print(f"| {s.shape} | {fmt(rd)} ({s.default}) | " + " | ".join(fmt(r[g]) for g in GROUPS)
              + f" | {fmt(over_g4)} | {fmt(vs_default)} |")
    print()
    print(f"Q0 correct: {'no WRONG row' if not wrong else 'WRONG: ' + '; '.join(wrong)}")
    if wrong:
        print("verdict: a wrong product; nothing else counts")
        return 0
    g1 = geomean(q1)
    print(f"Q1 g{big} over g4, {len(q1)} shapes: geometric mean {fmt(g1)} (rule: >= 1.03) -> "
          + ("the window is what the ping-pong tile loses to" if g1 and g1 >= 1.03 else "not shown"))
    g2 = geomean(q2)
    at_least = sum(x >= 1.0 for x in q2)
    print(f"Q2 g{big} over the default, {len(q2)} shapes: at or above on {at_least}, geometric mean {fmt(g2)} "
          "(rule: >= 5 of 7 and >= 1.02) -> "
          + ("a candidate: held-out run next" if len(q2) >= 7 and at_least >= 5 and g2 and g2 >= 1.02 else "not a candidate"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
