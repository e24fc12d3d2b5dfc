"""How run.sh's held-out shapes were chosen (2026-12-07 10:00 UTC, before any run), for the record:

  python3 pick.py grid-pp.txt.gz > shapes.txt

grid-pp.txt.gz: lines "DTYPE MxNxK TILE rowbytes%128=R", the 1,456 shapes where main's untuned rule (at
7153880) picks 128x128:s6:c2:g4:pp on an H200 (132 SMs, "NVIDIA H200": no card rule) with rows off 32-byte
sectors: M 256-1,024 in steps of 256, N 2,048-36,864 in steps of 1,024, K of 128 j + R bytes a row (R 16,
48, 80, 112; j in {16, 24, 32, 48, 64, 96, 112}), bf16 and e4m3, printed by a throwaway Go test calling
gpu.DefaultTile. The scope is the H100's (2026-12-07-h100-offsector-cl2.md), judged on the H200 by shapes of
its own: per dtype and M, the first shapes by the SHA-1 of "offsector-h200 DTYPE MxNxK", skipping every N
among issue 56's set's sizes and every shape a shapes.txt under bench/results/ lists: e4m3 three a M, bf16
two."""
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
        key = hashlib.sha1(f"offsector-h200 {dtype} {shape}".encode()).hexdigest()
        pool.setdefault((dtype, m), []).append((key, shape))
    for dtype in ("e4m3", "bf16"):
        for m in sorted({k[1] for k in pool if k[0] == dtype}):
            for _, shape in sorted(pool[(dtype, m)])[:TAKE[dtype]]:
                print(dtype, shape, OLD, NEW)


if __name__ == "__main__":
    main(sys.argv[1])
