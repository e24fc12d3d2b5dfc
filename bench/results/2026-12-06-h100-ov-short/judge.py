"""The rule of run.sh (beside this; written before the run), applied to its timing CSVs:

  python3 judge.py gemmalone-e4m3_row.csv [gemmalone-bf16.csv]

Prints a Markdown table a shape and dtype (each tile's ratio to cuBLASLt, the geometric mean of its rounds;
FP8 against cuBLASLt FP8) and the verdicts of Q0-Q2. Standard library only (bench/gemmalone_table.py reads
the CSVs). A missing bf16 CSV leaves Q2 unmeasured."""
import os
import sys
from typing import Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import fmt_ratio as fmt, geomean, over  # noqa: E402

EIGHT = {"4096x8192x1024", "4096x8192x2048", "16384x8192x2048", "8192x14336x1024", "12288x5120x2048",
         "8192x8192x1536", "16384x3584x3072", "6144x10240x2560"}
OV = ["128x256:s4:c2:g8:ov", "128x256:s4:c2:g8:cl2:ov"]


def over_default(paths: List[str], dtype: str, ruled: Optional[set]) -> Dict[str, List[float]]:
    """Prints the dtype's table; returns each :ov tile's ratios over the default, a ruled shape each."""
    out: Dict[str, List[float]] = {t: [] for t in OV}
    shapes = sorted((s for (_, dt), s in gemmalone_table.read(paths).items() if dt == dtype), key=lambda s: s.mnk)
    head = " | ".join(OV) + " | " + " | ".join(f"{t} / default" for t in OV)
    print(f"\n{dtype}\n\n| shape | default (its tile) | {head} |")
    print("|---|---|" + "---|" * (2 * len(OV)))
    for s in shapes:
        rd = s.ratio(s.default) if s.default else None
        r = {t: s.ratio(t) for t in OV}
        g = {t: over(r[t], rd) for t in OV}
        inside = ruled is None or s.shape in ruled
        for t in OV:
            x = g[t]
            if inside and x:
                out[t].append(x)
        print(f"| {s.shape}{'' if inside else ' (no rule)'} | {fmt(rd)} ({s.default}) | " + " | ".join(fmt(r[t]) for t in OV)
              + " | " + " | ".join(fmt(g[t]) for t in OV) + " |")
    return out


def wrong_rows(paths: List[str]) -> List[str]:
    return sorted({f"{s.shape} {dt} {t}: {why}" for (_, dt), s in gemmalone_table.read(paths).items()
                   for t, why in s.failed.items() if t.endswith(":ov")})


def main(argv: List[str]) -> int:
    fp8 = argv[0]
    bf16 = argv[1] if len(argv) > 1 and os.path.exists(argv[1]) else None
    paths = [fp8] + ([bf16] if bf16 else [])
    g8 = over_default([fp8], "e4m3_row", EIGHT)
    gb = over_default([bf16], "bf16", None) if bf16 else {t: [] for t in OV}
    print()
    wrong = wrong_rows(paths)
    print(f"Q0 correct: {'no WRONG row for an :ov tile' if not wrong else 'WRONG: ' + '; '.join(wrong)}")
    if wrong:
        print("verdict: an :ov tile is wrong; nothing else counts")
        return 0
    passing = []
    for t in OV:
        xs = g8[t]
        at_least = sum(x >= 1.0 for x in xs)
        gm = geomean(xs)
        ok = len(xs) == len(EIGHT) and at_least >= 6 and gm is not None and gm >= 1.03
        print(f"Q1 {t} over the default, {len(xs)} of {len(EIGHT)} shapes: at or above on {at_least}, geometric mean "
              f"{fmt(gm)} (rule: >= 6 of 8 and >= 1.03) -> {'passes' if ok else 'does not pass'}")
        if ok:
            passing.append((gm, t))
    if not passing:
        print("verdict: no short-loop candidate")
        return 0
    _, tile = max(passing)
    gbt = geomean(gb[tile])
    q2 = gbt is not None and gbt >= 0.99
    print(f"Q2 {tile} over the default in bf16, {len(gb[tile])} shapes: geometric mean {fmt(gbt)} (rule: >= 0.99) -> "
          + ("met" if q2 else "not met" if gbt is not None else "not measured"))
    move = "is a short-loop candidate: the patch goes to main with its rule" if q2 else "passes in FP8 only: no rule moves"
    print(f"verdict: {tile} {move}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
