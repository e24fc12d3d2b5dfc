"""How run.sh's held-out shapes were chosen (2026-12-07, before any run), for the record:

  python3 pick.py grid.txt > shapes.txt

grid.txt: lines "CHG e4m3 MxNxK OLD NEW", the 226 of 5,796 FP8 shapes where the untuned pick on one H100 (132
SMs) differs between main at c511b44 (OLD) and card-factors-5.patch (NEW), over card-factors-4's grid (M in
{512, ..., 16384}, 14 values; N 2,048 to 36,864 in steps of 512; K in {4096, 5120, 6144, 8192, 10240, 12288}),
printed by a throwaway Go test calling gpu.DefaultTileFor(gpu.VariantAGMM, ...) with and without the H100's FP8
map. The patch moves no pick to a whole 128x256 tile (that is its point), so every move is to 128x224,
128x160, 256x160 or stream-K. Per new pick, the first shapes by the SHA-1 of "e4m3 MxNxK", skipping every N
among issue 56's set's sizes and every shape timed before at these sizes (card-factors-4's pick.py lists
them, and card-factors-4's own 12)."""
import importlib.util
import os
import sys
from typing import Dict, Set

HERE = os.path.dirname(os.path.abspath(__file__))
PRIOR = os.path.join(HERE, "..", "2026-12-07-h100-card-factors-4")
_spec = importlib.util.spec_from_file_location("cf4_pick", os.path.join(PRIOR, "pick.py"))
assert _spec is not None and _spec.loader is not None
cf4 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cf4)

# NEW -> how many: about the grid's shares (126, 78, 16, 6 of 226), at least two each.
TAKE: Dict[str, int] = {
    "128x224:s5:c2:g16": 5,
    "128x160:s6:c2:g8": 3,
    "128x256:s4:c2:g8:cl2:st": 2,
    "256x160:s4:c2:g8": 2,
}

_cf4_timed_before = cf4.timed_before


def timed_before() -> Set[str]:
    timed: Set[str] = _cf4_timed_before()
    timed |= {line.split()[1] for line in open(os.path.join(PRIOR, "shapes.txt")) if line.strip()}
    return timed


def main(grid: str) -> int:
    """card-factors-4's selection, with this plan's quotas and its shapes counted as timed."""
    setattr(cf4, "TAKE", TAKE)
    setattr(cf4, "timed_before", timed_before)
    return int(cf4.main(grid))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
