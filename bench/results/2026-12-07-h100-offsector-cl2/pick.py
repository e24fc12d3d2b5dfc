"""How run.sh's held-out shapes were chosen (2026-12-07 07:35 UTC, before any run), for the record:

  python3 pick.py grid-pp.txt.gz > shapes.txt

grid-pp.txt.gz: offline-cl2's grid (its pick.py says how it is made) printed again with main's untuned rule at
3059258, after the H100's FP8 card factor went to main: 2,177 shapes where it picks 128x128:s6:c2:g4:pp on one
H100 (826 FP8 shapes of the earlier grid now take another tile). The candidate's scope: M a multiple of 256
and rows off 32-byte sectors (R % 32 = 16), where offline-cl2's clustered twin won 11 of 12 (read after that
run, not judged). Per dtype and M, the first shapes by the SHA-1 of "offsector DTYPE MxNxK" (a salt of its
own, so not offline-cl2's order), skipping every N among issue 56's set's sizes and every shape a shapes.txt
under bench/results/ lists: e4m3 three a M, bf16 two."""
import glob
import gzip
import hashlib
import os
import sys
from typing import Dict, List, Set, Tuple

SET_N = {1280, 1792, 2560, 3584, 5120, 7168, 7392, 8192, 10240, 14336, 14784, 28672, 29568, 57344, 59136}
TAKE = {"e4m3": 3, "bf16": 2}
OLD, NEW = "128x128:s6:c2:g4:pp", "128x128:s6:c2:g4:cl2"
HERE = os.path.dirname(os.path.abspath(__file__))
# The order's salt (a plan that reuses this script for another card sets its own, and its HERE).
SALT = "offsector"


def timed_before() -> Set[str]:
    """Every "DTYPE MxNxK" a results folder's shapes.txt lists (this plan's own left out)."""
    out: Set[str] = set()
    for path in glob.glob(os.path.join(HERE, "..", "*", "shapes.txt")):
        if os.path.samefile(os.path.dirname(path), HERE):
            continue
        for line in open(path):
            f = line.split()
            if len(f) >= 2:
                out.add(f"{f[0].replace('e4m3_row', 'e4m3')} {f[1]}")
    return out


def main(path: str) -> None:
    seen = timed_before()
    pool: Dict[Tuple[str, int], List[Tuple[str, str]]] = {}
    for line in gzip.open(path, "rt"):
        dtype, shape, tile, rb = line.split()
        m, n, _ = (int(x) for x in shape.split("x"))
        if tile != OLD or m % 256 or n in SET_N or int(rb.split("=")[1]) % 32 != 16:
            continue
        if f"{dtype} {shape}" in seen:
            continue
        key = hashlib.sha1(f"{SALT} {dtype} {shape}".encode()).hexdigest()
        pool.setdefault((dtype, m), []).append((key, shape))
    for dtype in ("e4m3", "bf16"):
        for m in sorted({k[1] for k in pool if k[0] == dtype}):
            for _, shape in sorted(pool[(dtype, m)])[:TAKE[dtype]]:
                print(dtype, shape, OLD, NEW)


if __name__ == "__main__":
    main(sys.argv[1])
