"""How run.sh's held-out shapes were chosen (2026-12-06, before any run), for the record:

  python3 pick.py grid.txt ../2026-12-06-h100-card-factors/shapes.txt > shapes.txt

grid.txt: lines "CHG DTYPE MxNxK OLD NEW", the 702 shapes of 2 x 5,796 (bf16 and e4m3) where the untuned pick
on one H100 (132 SMs) differs between main's factors at d3c5c3a (OLD) and card-factors-2.patch's (NEW), over M in
{512, ..., 16384} (14 values), N 2,048 to 36,864 in steps of 512, K in {4096, 5120, 6144, 8192, 10240, 12288},
printed by a throwaway Go test calling gpu.DefaultTileFor(gpu.VariantAGMM, ...) with both factor sets (the
grid of 2026-12-06-h100-card-factors/pick.py). Per dtype and change of pick (OLD -> NEW), the first shapes by
the SHA-1 of "DTYPE MxNxK", skipping every N among issue 56's set's sizes and every shape timed before at
these sizes (the card-factors, pp-rows and wide-pick calls' shapes). Printed alternately bf16 and e4m3, so
that a deadline cuts both dtypes alike."""
import hashlib
import sys
from collections import defaultdict
from typing import Dict, List, Set, Tuple

TAKE: Dict[Tuple[str, str, str], int] = {
    ("bf16", "128x160:s6:c2:g8", "128x224:s5:c2:g16"): 3,
    ("bf16", "128x160:s6:c2:g8", "128x256:s4:c2:g8"): 3,
    ("bf16", "128x160:s6:c2:g8", "128x256:s4:c2:g8:cl2:st"): 2,
    ("bf16", "128x160:s6:c2:g8", "256x160:s4:c2:g8"): 1,
    ("bf16", "128x160:s6:c2:g8", "128x256:s4:c2:g8:cl2"): 1,
    ("e4m3", "128x128:s6:c2:g4:pp", "128x256:s4:c2:g8"): 3,
    ("e4m3", "128x128:s6:c2:g4:pp", "128x224:s5:c2:g16"): 3,
    ("e4m3", "128x128:s6:c2:g4:pp", "128x160:s6:c2:g8"): 2,
    ("e4m3", "128x128:s6:c2:g4:pp", "128x256:s4:c2:g8:cl2"): 2,
    ("e4m3", "128x128:s6:c2:g4:pp", "128x256:s4:c2:g8:cl2:st"): 1,
    ("e4m3", "128x128:s6:c2:g4:pp", "256x160:s4:c2:g8"): 1,
}
# Sizes of issue 56's set (bench/gemmalone/shapes.go); a shape with N among them may have been timed.
SET_SIZES = {1280, 1792, 2560, 3584, 3696, 4096, 5120, 7168, 7392, 8192, 10240, 14336, 14784, 28672, 29568,
             57344, 59136}
# Timed before at non-set sizes: 2026-12-06-h100-pp-rows/run.sh and 2026-12-06-h100-wide-pick/run.sh (the
# card-factors call's come from its shapes.txt, the second argument).
TIMED = {"1024x13824x8192", "1024x18432x8192", "1536x28672x8192", "2048x29568x8192", "2048x7168x8192",
         "3072x14336x8192", "1024x6144x8192", "1536x4096x8192", "1024x29568x8192", "1024x26624x8192",
         "1024x22528x10240", "1024x29568x14336", "1536x15360x12288", "1536x26624x8192", "1536x29568x10240"}


def main(grid: str, timed_file: str) -> int:
    timed: Set[str] = set(TIMED) | {line.split()[0] for line in open(timed_file) if line.strip()}
    by: Dict[Tuple[str, str, str], List[str]] = defaultdict(list)
    for line in open(grid):
        f = line.split()
        if not f or f[0] != "CHG":
            continue
        dtype, shape, old, new = f[1:5]
        if int(shape.split("x")[1]) in SET_SIZES or shape in timed:
            continue
        by[(dtype, old, new)].append(shape)
    per: Dict[str, List[str]] = defaultdict(list)
    for key, want in TAKE.items():
        got = sorted(by[key], key=lambda s: hashlib.sha1(f"{key[0]} {s}".encode()).hexdigest())[:want]
        per[key[0]] += [f"{key[0]} {s} {key[1]} {key[2]}" for s in got]
    a, b = per["e4m3"], per["bf16"]
    for i in range(max(len(a), len(b))):
        for side in (a, b):
            if i < len(side):
                print(side[i])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
