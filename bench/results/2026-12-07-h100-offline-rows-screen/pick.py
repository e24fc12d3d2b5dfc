"""How run.sh's screen shapes were chosen (2026-12-07 20:50 UTC, before any run), for the record:

  python3 pick.py grid-pp.txt.gz > shapes.txt

grid-pp.txt.gz: lines "DTYPE MxNxK TILE rowbytes%128=R", the shapes of 256, 384 and 512 rows whose rows start on
32-byte sectors but off 128-byte lines (R in {32, 64, 96}) where main's untuned rule (at 58fd634) picks
128x128:s6:c2:g4:pp on one H100 (132 SMs, its name), printed by the throwaway Go test of
2026-12-07-h100-offsector-3rows/pick.py (gpu.DefaultTileFor(VariantAGMM, ...); N 2,048-36,864 in steps of 1,024, K
whose rows are 128 j + R bytes, j in {16, 24, 32, 48, 64, 96, 112}). Scope: per dtype and M, the first two shapes
by the SHA-1 of "offline-rows DTYPE MxNxK", skipping every N among issue 56's set's sizes and every shape a
shapes.txt under bench/results/ lists; round robin over the groups (each group's first, then its second), so a
call cut short still covers every group. Then, read only, issue 56's two bf16 shapes of this kind where the
ping-pong tile is furthest behind cuBLASLt on the H100 (256 x 8192 x 3696, 0.923; 256 x 8192 x 7392, 0.917;
2026-12-06-h100-sustained-bf16.md)."""

import gzip
import hashlib
import importlib.util
import os
import sys
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "offsector_pick", os.path.join(HERE, "..", "2026-12-07-h100-offsector-cl2", "pick.py"))
assert _spec is not None and _spec.loader is not None
h100 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(h100)
setattr(h100, "HERE", HERE)

ROWS = (256, 384, 512)
TAKE = 2
SET_READINGS = ("bf16 256x8192x3696", "bf16 256x8192x7392")


def main(path: str) -> None:
    seen = h100.timed_before()
    pool: Dict[Tuple[str, int], List[Tuple[str, str]]] = {}
    for line in gzip.open(path, "rt"):
        dtype, shape, tile, rb = line.split()
        m, n, _ = (int(x) for x in shape.split("x"))
        r = int(rb.split("=")[1])
        if tile != "128x128:s6:c2:g4:pp" or m not in ROWS or n in h100.SET_N or r % 32 or r % 128 == 0:
            continue
        if f"{dtype} {shape}" in seen:
            continue
        key = hashlib.sha1(f"offline-rows {dtype} {shape}".encode()).hexdigest()
        pool.setdefault((dtype, m), []).append((key, shape))
    for r in range(TAKE):
        for m in ROWS:
            for dtype in ("e4m3", "bf16"):
                picks = sorted(pool.get((dtype, m), []))[:TAKE]
                if r < len(picks):
                    print(dtype, picks[r][1])
    for line in SET_READINGS:
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
