"""The rule of run.sh (beside this; written before the run), applied to its timing CSV:

  python3 judge.py gemmalone-e4m3_row.csv

Prints a Markdown table a shape (each tile's ratio to cuBLASLt FP8, the geometric mean of its rounds) and the
verdicts of Q0-Q2. Standard library only (bench/gemmalone_table.py reads the CSV)."""
import os
import sys
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import fmt_ratio as fmt, geomean, over  # noqa: E402

SEVEN = {"8192x8192x8192", "4096x14336x4096", "4096x8192x4096", "12288x5120x5120", "16384x8192x3584",
         "16384x5120x8192", "1024x14336x8192"}
CL2 = "128x256:s4:c2:g8:cl2"
PLAIN = "128x256:s4:c2:g8"
# (twin, scales-ahead tile): Q1's two settings, then Q2's.
PAIRS: List[Tuple[str, str]] = [(CL2, CL2 + ":sa2"), (CL2, CL2 + ":sa4"), (PLAIN, PLAIN + ":sa2")]


def verdict(label: str, xs: List[float]) -> Tuple[bool, Optional[float]]:
    at_least = sum(x >= 1.0 for x in xs)
    g = geomean(xs)
    ok = len(xs) == len(SEVEN) and at_least >= 5 and g is not None and g >= 1.015
    print(f"{label}, {len(xs)} of {len(SEVEN)} shapes: at or above on {at_least}, geometric mean {fmt(g)} "
          f"(rule: >= 5 of 7 and >= 1.015) -> {'passes' if ok else 'does not pass'}")
    return ok, g


def main(path: str) -> int:
    shapes = sorted(gemmalone_table.read([path]).values(), key=lambda s: s.mnk)
    wrong = sorted({f"{s.shape} {t}: {why}" for s in shapes for t, why in s.failed.items() if ":sa" in t})
    tiles = [CL2, CL2 + ":sa2", CL2 + ":sa4", PLAIN, PLAIN + ":sa2"]
    print("| shape | " + " | ".join(tiles) + " | " + " | ".join(f"{o} / twin" for _, o in PAIRS) + " |")
    print("|---|" + "---|" * (len(tiles) + len(PAIRS)))
    gains: Dict[str, List[float]] = {o: [] for _, o in PAIRS}
    for s in shapes:
        r = {t: s.ratio(t) for t in tiles}
        g = {o: over(r[o], r[tw]) for tw, o in PAIRS}
        ruled = s.shape in SEVEN
        for o, x in g.items():
            if ruled and x:
                gains[o].append(x)
        print(f"| {s.shape}{'' if ruled else ' (no rule)'} | " + " | ".join(fmt(r[t]) for t in tiles) + " | "
              + " | ".join(fmt(g[o]) for _, o in PAIRS) + " |")
    print()
    print(f"Q0 correct: {'no WRONG row for an :sa tile' if not wrong else 'WRONG: ' + '; '.join(wrong)}")
    if wrong:
        print("verdict: the scales-ahead tiles are wrong; nothing else counts")
        return 0
    passing = []
    for _, o in PAIRS[:2]:
        ok, gm = verdict(f"Q1 {o} over {CL2}", gains[o])
        if ok and gm is not None:
            passing.append((gm, o))
    verdict(f"Q2 (reported) {PAIRS[2][1]} over {PLAIN}", gains[PAIRS[2][1]])
    if passing:
        print(f"verdict: {max(passing)[1]} is a candidate: held-out run next")
    else:
        print("verdict: not a candidate")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
