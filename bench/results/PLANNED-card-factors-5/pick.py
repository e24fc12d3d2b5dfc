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
import hashlib
import importlib.util
import os
import sys
from collections import defaultdict
from typing import Dict, List, Set

HERE = os.path.dirname(os.path.abspath(__file__))
PRIOR = os.path.join(HERE, "..", "2026-12-07-h100-card-factors-4")
_spec = importlib.util.spec_from_file_location("cf4_pick", os.path.join(PRIOR, "pick.py"))
assert _spec is not None and _spec.loader is not None
cf4 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cf4)

PP = "128x128:s6:c2:g4:pp"
# NEW -> how many: about the grid's shares (126, 78, 16, 6 of 226), at least two each.
TAKE: Dict[str, int] = {
    "128x224:s5:c2:g16": 5,
    "128x160:s6:c2:g8": 3,
    "128x256:s4:c2:g8:cl2:st": 2,
    "256x160:s4:c2:g8": 2,
}


def timed_before() -> Set[str]:
    timed: Set[str] = cf4.timed_before()
    timed |= {line.split()[1] for line in open(os.path.join(PRIOR, "shapes.txt")) if line.strip()}
    return timed


def main(grid: str) -> int:
    timed = timed_before()
    by: Dict[str, List[str]] = defaultdict(list)
    for line in open(grid):
        f = line.split()
        if not f or f[0] != "CHG":
            continue
        _, dtype, shape, old, new = f[:5]
        if dtype != "e4m3" or old != PP or int(shape.split("x")[1]) in cf4.cf3.cf2.SET_SIZES or shape in timed:
            continue
        by[new].append(shape)
    for new, want in TAKE.items():
        got = sorted(by[new], key=lambda s: hashlib.sha1(f"e4m3 {s}".encode()).hexdigest())[:want]
        if len(got) < want:
            print(f"pick.py: {len(got)} of {want} for {new}", file=sys.stderr)
        for s in got:
            print(f"e4m3 {s} {PP} {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
