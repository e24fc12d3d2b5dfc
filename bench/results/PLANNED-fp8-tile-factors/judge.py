"""The reading of run.sh (beside this; written before the run), applied to its timing CSV:

  python3 judge.py machine.txt gemmalone-e4m3_row.csv...

Prints each tile's FP8 factor (the geometric mean of its ratio to cuBLASLt FP8 over 128x256:cl2's, on the
shapes where all five tiles ran) beside the untuned rule's factors as on main when this was written
(kernels/gemm/gpu/defaults_tile.go at 2c0a955: tileEfficiency, the H200's bf16 ones, which FP8 uses; and
cardTileEfficiency's H100 bf16 ones, for comparison), and the reading. Standard library only
(bench/gemmalone_table.py reads the CSVs)."""
import os
import sys
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table  # noqa: E402
from gemmalone_table import geomean  # noqa: E402

REF = "128x256:s4:c2:g8:cl2"
RULE = {"128x224:s5:c2:g16": 0.946, "128x128:s6:c2:g4:pp": 0.965, "256x160:s4:c2:g8": 0.996,
        "128x160:s6:c2:g8": 0.956}
H100_BF16 = {"128x224:s5:c2:g16": 0.936, "128x128:s6:c2:g4:pp": 0.896}
DIFFERS = 0.03


def main(argv: List[str]) -> int:
    card = open(argv[0]).read().splitlines()[-1].split(",")[0].strip()
    shapes = [s for (_, dt), s in gemmalone_table.read(argv[1:]).items() if dt == "e4m3_row"]
    tiles = [REF] + list(RULE)
    full = [s for s in shapes if all(s.ratio(t) is not None for t in tiles)]
    print(f"{card}: {len(full)} of {len(shapes)} shapes with all five tiles")
    if len(full) < 12:
        print("reading: fewer than 12 shapes with all five tiles: no reading")
        return 0
    print("| tile | FP8 factor (this card) | rule (H200 bf16) | H100 bf16 | over the rule |")
    print("|---|---|---|---|---|")
    factors: Dict[str, float] = {}
    for t in RULE:
        f = geomean([s.ratio(t) / s.ratio(REF) for s in full])  # type: ignore[operator]
        assert f is not None
        factors[t] = f
        h = H100_BF16.get(t)
        print(f"| {t} | {f:.3f} | {RULE[t]:.3f} | {'' if h is None else f'{h:.3f}'} | {f - RULE[t]:+.3f} |")
    off = [t for t, f in factors.items() if abs(f - RULE[t]) >= DIFFERS]
    if off:
        print(f"reading: FP8 factors differ from the rule's by {DIFFERS} or more on {', '.join(off)}: "
              "a patch for FP8 factors (on this card), timed held out where its picks change")
    else:
        print(f"reading: every FP8 factor within {DIFFERS} of the rule's: FP8 keeps them")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
