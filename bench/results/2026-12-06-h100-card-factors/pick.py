"""How run.sh's held-out shapes were chosen (2026-12-06, before any run), for the record:

  python3 pick.py grid.txt > shapes.txt

grid.txt: lines "CHG MxNxK OLD NEW", the 418 of 5,796 shapes where the bf16 untuned pick on one H100 (132
SMs) differs between main's factors (OLD) and card-factors.patch's (NEW), over M in {512, ..., 16384} (14
values), N 2,048 to 36,864 in steps of 512, K in {4096, 5120, 6144, 8192, 10240, 12288}, printed by a
throwaway Go test calling gpu.DefaultTileFor(gpu.VariantAGMM, ...) with both cards. Per change of pick
(OLD -> NEW), the first shapes by the SHA-1 of "MxNxK", skipping every N among issue 56's set's sizes.
None of the twelve was timed before: their N are none of the set's, of the 22 shapes of
2026-12-06-h100-pp-rows.md or of the 23 of 2026-12-06-h100-tile-factors.md."""
import hashlib
import sys
from collections import defaultdict

TAKE = {("128x128:s6:c2:g4:pp", "128x256:s4:c2:g8:cl2:st"): 3, ("128x128:s6:c2:g4:pp", "128x256:s4:c2:g8"): 2,
        ("128x128:s6:c2:g4:pp", "128x224:s5:c2:g16"): 3, ("128x128:s6:c2:g4:pp", "128x160:s6:c2:g8"): 2,
        ("128x128:s6:c2:g4:pp", "128x256:s4:c2:g8:cl2"): 1, ("128x224:s5:c2:g16", "128x256:s4:c2:g8:cl2:st"): 1}
# Sizes of issue 56's set (bench/gemmalone/shapes.go); a shape with N among them may have been timed.
SET_SIZES = {1280, 1792, 2560, 3584, 3696, 4096, 5120, 7168, 7392, 8192, 10240, 14336, 14784, 28672, 29568,
             57344, 59136}


def main(path: str) -> int:
    by = defaultdict(list)
    for line in open(path):
        f = line.split()
        if f and f[0] == "CHG":
            m, n, k = map(int, f[1].split("x"))
            if n in SET_SIZES:
                continue
            by[(f[2], f[3])].append(f[1])
    for key, want in TAKE.items():
        got = sorted(by[key], key=lambda s: hashlib.sha1(s.encode()).hexdigest())[:want]
        for s in got:
            print(s, key[0], key[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
