"""How run.sh's held-out shapes were chosen (2026-12-06 23:18 UTC, before any run), for the record:

  python3 pick.py grid.txt > shapes.txt

grid.txt: lines "CHG e4m3 MxNxK OLD NEW", the 437 of 5,796 FP8 shapes where the untuned pick on one H100 (132
SMs) differs between main at 5ca8135 (OLD) and card-factors-3.patch (NEW), over M in {512, ..., 16384} (14
values), N 2,048 to 36,864 in steps of 512, K in {4096, 5120, 6144, 8192, 10240, 12288}, printed by a throwaway
Go test calling gpu.DefaultTileFor(gpu.VariantAGMM, ...) with and without the H100's FP8 map. Per change of
pick, the first shapes by the SHA-1 of "e4m3 MxNxK", skipping every N among issue 56's set's sizes and every
shape timed before at these sizes (card-factors-2's pick.py lists them; its shapes.txt and card-factors'
too). Five of them near the new bound (N below 8,192, from fp8CardMinColumns = 4,096 up), where the shape
card-factors-2 lost on sits just under it."""
import hashlib
import importlib.util
import os
import sys
from collections import defaultdict
from typing import Dict, List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
PRIOR = os.path.join(HERE, "..", "2026-12-06-h100-card-factors-2")
_spec = importlib.util.spec_from_file_location("cf2_pick", os.path.join(PRIOR, "pick.py"))
assert _spec is not None and _spec.loader is not None
cf2 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cf2)

PP = "128x128:s6:c2:g4:pp"
NEAR = 8192  # "near the bound": N below this
# (NEW, near the bound) -> how many.
TAKE: Dict[Tuple[str, bool], int] = {
    ("128x256:s4:c2:g8:cl2", True): 3,
    ("128x256:s4:c2:g8:cl2:st", False): 1,
    ("128x224:s5:c2:g16", True): 1,
    ("128x160:s6:c2:g8", True): 1,
    ("128x256:s4:c2:g8:cl2", False): 1,
    ("128x224:s5:c2:g16", False): 2,
    ("128x256:s4:c2:g8", False): 2,
    ("128x160:s6:c2:g8", False): 1,
    ("256x160:s4:c2:g8", False): 1,
}


def timed_before() -> Set[str]:
    timed: Set[str] = set(cf2.TIMED)
    for f in (os.path.join(PRIOR, "shapes.txt"), os.path.join(HERE, "..", "2026-12-06-h100-card-factors", "shapes.txt")):
        timed |= {line.split()[1] if line.split()[0] in ("bf16", "e4m3") else line.split()[0]
                  for line in open(f) if line.strip()}
    return timed


def main(grid: str) -> int:
    timed = timed_before()
    by: Dict[Tuple[str, bool], List[str]] = defaultdict(list)
    for line in open(grid):
        f = line.split()
        if not f or f[0] != "CHG":
            continue
        _, dtype, shape, old, new = f[:5]
        n = int(shape.split("x")[1])
        if dtype != "e4m3" or old != PP or n in cf2.SET_SIZES or shape in timed:
            continue
        by[(new, n < NEAR)].append(shape)
    for (new, near), want in TAKE.items():
        got = sorted(by[(new, near)], key=lambda s: hashlib.sha1(f"e4m3 {s}".encode()).hexdigest())[:want]
        if len(got) < want:
            print(f"pick.py: {len(got)} of {want} for {new} near={near}", file=sys.stderr)
        for s in got:
            print(f"e4m3 {s} {PP} {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
