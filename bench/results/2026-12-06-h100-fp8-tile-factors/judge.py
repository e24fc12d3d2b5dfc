"""The reading of run.sh (beside this; written before the run), applied to its timing CSVs:

  python3 judge.py machine.txt gemmalone-e4m3_row.csv gemmalone-bf16.csv

Per dtype (e4m3_row, bf16), each tile's factor: the geometric mean of its ratio to cuBLASLt over
128x256:cl2's, on the shapes where all six tiles ran; beside the untuned rule's factor for this card and
dtype as on main when this was written (kernels/gemm/gpu/defaults_tile.go at 348b7ba: tileEfficiency,
the H200's bf16 factors, which FP8 and every other card use; cardTileEfficiency's H100 bf16 factors for
bf16 on a card named H100), and the reading. Standard library only (bench/gemmalone_table.py reads the
CSVs)."""
import os
import sys
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import geomean  # noqa: E402

REF = "128x256:s4:c2:g8:cl2"
# 128x256 without clusters has no entry in tileEfficiency: the rule weighs it at 1, as 128x256:cl2.
RULE = {"128x224:s5:c2:g16": 0.946, "128x128:s6:c2:g4:pp": 0.965, "256x160:s4:c2:g8": 0.996,
        "128x160:s6:c2:g8": 0.956, "128x256:s4:c2:g8": 1.0}
MEASURED_ON_H200 = set(RULE) - {"128x256:s4:c2:g8"}
CARD_BF16 = {"H100": {"128x224:s5:c2:g16": 0.936, "128x128:s6:c2:g4:pp": 0.896}}
DIFFERS = 0.03
MIN_SHAPES = 12


def rule_factor(card: str, dtype: str, tile: str) -> Tuple[float, bool]:
    """The rule's factor for tile on card in dtype, and whether it is the card's own (measured on it)."""
    if dtype == "bf16":
        for part, f in CARD_BF16.items():
            if part in card and tile in f:
                return f[tile], True
    return RULE[tile], "H200" in card and dtype == "bf16" and tile in MEASURED_ON_H200


def factors(shapes: List["gemmalone_table.Shape"]) -> Tuple[int, Dict[str, float]]:
    tiles = [REF] + list(RULE)
    full = [s for s in shapes if all(s.ratio(t) is not None for t in tiles)]
    out: Dict[str, float] = {}
    for t in RULE:
        f: Optional[float] = geomean([s.ratio(t) / s.ratio(REF) for s in full])  # type: ignore[operator]
        if f is not None:
            out[t] = f
    return len(full), out


def main(argv: List[str]) -> int:
    card = open(argv[0]).read().splitlines()[-1].split(",")[0].strip()
    by = gemmalone_table.read(argv[1:])
    for dtype in ("e4m3_row", "bf16"):
        shapes = [s for (_, dt), s in by.items() if dt == dtype]
        n, fs = factors(shapes)
        print(f"## {dtype} on {card}: {n} of {len(shapes)} shapes with all six tiles")
        if n < MIN_SHAPES:
            print(f"reading: fewer than {MIN_SHAPES} shapes with all six tiles: no reading\n")
            continue
        print("| tile | factor (this run) | the rule's for this card | its own? | over the rule's |")
        print("|---|---|---|---|---|")
        off: List[str] = []
        checks: List[str] = []
        for t, f in fs.items():
            r, own = rule_factor(card, dtype, t)
            print(f"| {t} | {f:.3f} | {r:.3f} | {'yes' if own else 'no'} | {f - r:+.3f} |")
            if abs(f - r) >= DIFFERS:
                (checks if own else off).append(t)
        if off:
            print(f"reading: {', '.join(off)} {DIFFERS} or more off the rule's factor, which was not measured on this "
                  f"card in {dtype}: a patch with this card's {dtype} factors, timed held out where its picks change")
        else:
            print(f"reading: every factor not measured on this card in {dtype} within {DIFFERS} of the rule's: "
                  "the rule keeps them")
        if checks:
            print(f"reported: this card's own {dtype} factor of {', '.join(checks)} measured {DIFFERS} or more "
                  "away this time (a second round, not judged)")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
