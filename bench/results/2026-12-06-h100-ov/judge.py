"""The rule of run.sh (beside this; written before the run), applied to its timing CSV:

  python3 judge.py gemmalone-e4m3_row.csv

Prints a Markdown table a shape (each tile's ratio to cuBLASLt FP8, the geometric mean of its rounds) and the
verdicts of Q0-Q2. Standard library only (bench/gemmalone_table.py reads the CSV)."""
import os
import sys
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import geomean  # noqa: E402

# The rule's shapes; any other row is printed, marked, and left out of Q1 and Q2.
SEVEN = {"8192x8192x8192", "4096x14336x4096", "4096x8192x4096", "12288x5120x5120", "16384x8192x3584",
         "16384x5120x8192", "1024x14336x8192"}
PAIRS: List[Tuple[str, str]] = [("128x256:s4:c2:g8", "128x256:s4:c2:g8:ov"),
                                ("128x256:s4:c2:g8:cl2", "128x256:s4:c2:g8:cl2:ov")]


def fmt(x: Optional[float]) -> str:
    return f"{x:.3f}" if x is not None else "-"


def main(path: str) -> int:
    shapes = sorted(gemmalone_table.read([path]).values(), key=lambda s: s.mnk)
    wrong = sorted({f"{s.shape} {t}: {why}" for s in shapes for t, why in s.failed.items() if t.endswith(":ov")})
    tiles = [t for pair in PAIRS for t in pair]
    print("| shape | default (its tile) | " + " | ".join(tiles) + " | ov / static | better ov / default |")
    print("|---|---|" + "---|" * len(tiles) + "---|---|")
    q1, q2 = [], []
    for s in shapes:
        r = {t: s.ratio(t) for t in tiles}
        rd = s.ratio(s.default) if s.default else None
        gains = [r[o] / r[st] for st, o in PAIRS if r[st] and r[o]]
        best = max((r[o] for _, o in PAIRS if r[o]), default=None)
        vs_default = best / rd if best and rd else None
        ruled = s.shape in SEVEN
        if ruled:
            q1.extend(gains)
            if vs_default:
                q2.append(vs_default)
        print(f"| {s.shape}{'' if ruled else ' (no rule)'} | {fmt(rd)} ({s.default}) | " + " | ".join(fmt(r[t]) for t in tiles)
              + f" | {' '.join(fmt(g) for g in gains) or '-'} | {fmt(vs_default)} |")
    print()
    print(f"Q0 correct: {'no WRONG row for an :ov tile' if not wrong else 'WRONG: ' + '; '.join(wrong)}")
    if wrong:
        print("verdict: the overlapped epilogue is wrong; nothing else counts")
        return 0
    g1 = geomean(q1)
    print(f"Q1 :ov over its static twin, {len(q1)} pairs: geometric mean {fmt(g1)} (rule: >= 1.02) -> "
          + ("the epilogue's idle tensor pipe is recovered" if g1 and g1 >= 1.02 else "not shown"))
    g2 = geomean(q2)
    at_least = sum(x >= 1.0 for x in q2)
    print(f"Q2 the better :ov tile over the default, {len(q2)} shapes: at or above on {at_least}, geometric mean "
          f"{fmt(g2)} (rule: >= 5 of 7 and >= 1.02) -> "
          + ("a candidate: held-out run next" if len(q2) >= 7 and at_least >= 5 and g2 and g2 >= 1.02 else "not a candidate"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
