"""The rule of run.sh (beside this; written before the run), applied to its timing CSV:

  python3 judge.py gemmalone-e4m3_row.csv

Prints a Markdown table a shape (each tile's ratio to cuBLASLt FP8, the geometric mean of its rounds) and the
verdicts of Q0-Q2. Standard library only (bench/gemmalone_table.py reads the CSV)."""
import math
import os
import sys
from typing import List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402

PP, PP_DYN = "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:pp:dyn"
CO, CO_DYN = "128x256:s4:c2:g8", "128x256:s4:c2:g8:dyn"
CL, CL_DYN = "128x256:s4:c2:g8:cl2", "128x256:s4:c2:g8:cl2:dyn"


def geomean(xs: List[float]) -> Optional[float]:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x: Optional[float]) -> str:
    return f"{x:.3f}" if x is not None else "-"


def main(path: str) -> int:
    shapes = sorted(gemmalone_table.read([path]).values(), key=lambda s: s.mnk)
    wrong = sorted({f"{s.shape} {t}: {why}" for s in shapes for t, why in s.failed.items() if t.endswith(":dyn")})
    print("| shape | default (its tile) | pp | pp:dyn | 128x256 | 128x256:dyn | cl2:dyn | pp:dyn / pp | best dyn / default |")
    print("|---|---|---|---|---|---|---|---|---|")
    q1, q2, co, cl = [], [], [], []
    for s in shapes:
        d = s.default
        r = {t: s.ratio(t) for t in (PP, PP_DYN, CO, CO_DYN, CL_DYN)}
        rd = s.ratio(d) if d else None
        pp_gain = r[PP_DYN] / r[PP] if r[PP] and r[PP_DYN] else None
        dyn = max((x for x in (r[PP_DYN], r[CO_DYN], r[CL_DYN]) if x), default=None)
        vs_default = dyn / rd if dyn and rd else None
        if pp_gain:
            q1.append(pp_gain)
        if vs_default:
            q2.append(vs_default)
        if r[CO] and r[CO_DYN]:
            co.append(r[CO_DYN] / r[CO])
        if d == CL and rd and r[CL_DYN]:
            cl.append(r[CL_DYN] / rd)
        print(f"| {s.shape} | {fmt(rd)} ({d}) | {fmt(r[PP])} | {fmt(r[PP_DYN])} | {fmt(r[CO])} | {fmt(r[CO_DYN])} | {fmt(r[CL_DYN])} | "
              f"{fmt(pp_gain)} | {fmt(vs_default)} |")
    print()
    print(f"Q0 correct: {'no WRONG row for a dynamic tile' if not wrong else 'WRONG: ' + '; '.join(wrong)}")
    if wrong:
        print("verdict: the dynamic kernel is wrong; nothing else counts")
        return 0
    g1 = geomean(q1)
    print(f"Q1 pp:dyn over pp, {len(q1)} shapes: geometric mean {fmt(g1)} (rule: >= 1.05) -> "
          + ("the schedule is what the ping-pong tile lost to" if g1 and g1 >= 1.05 else "not shown"))
    g2 = geomean(q2)
    at_least = sum(x >= 1.0 for x in q2)
    print(f"Q2 the better dynamic tile over the default, {len(q2)} shapes: at or above on {at_least}, geometric mean "
          f"{fmt(g2)} (rule: >= 5 of 7 and >= 1.02) -> "
          + ("a candidate: held-out run next" if len(q2) >= 7 and at_least >= 5 and g2 and g2 >= 1.02 else "not a candidate"))
    print(f"128x256:dyn over 128x256 (no rule), {len(co)} shapes: geometric mean {fmt(geomean(co))}")
    print(f"128x256:cl2:dyn over the default 128x256:cl2 (no rule), {len(cl)} shapes: geometric mean {fmt(geomean(cl))}")
    # heldout.sh's tile: the dynamic tile of the highest geometric mean ratio over the shapes timed for all three.
    both = [s for s in shapes if all(s.ratio(t) for t in (PP_DYN, CO_DYN, CL_DYN))]
    best = max((PP_DYN, CO_DYN, CL_DYN), key=lambda t: geomean([s.ratio(t) or 1.0 for s in both]) or 0.0) if both else None
    print(f"the dynamic tile for heldout.sh (highest geometric mean over {len(both)} shapes): {best}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
