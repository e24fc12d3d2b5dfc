"""How run.sh's held-out shapes were chosen (2026-12-07 13:40 UTC, before any run), for the record:

  python3 pick.py ../2026-12-07-h100-offsector-cl2/grid-pp.txt.gz > shapes.txt

The grid is offsector-cl2's (shapes where the H100's rule picked 128x128:s6:c2:g4:pp before the clustered
twin; at 1,024 rows with rows off 32-byte sectors it now picks the twin 128x128:s6:c2:g4:cl2). The lead, read
after the cluster4 screen (2026-12-07-h100-cluster4.md, not judged there): at 1024 x 6144 x 7192 bf16 and
1024 x 6144 x 2064 FP8 the twin ran 8-13% behind 128x256:s4:c2:g8:cl2. Scope: 1,024 rows, rows off sectors
(R % 32 = 16), the twin the untuned pick; per dtype and N (the grid has N 2,048 and 6,144 in both dtypes,
18,432 and 26,624 in e4m3: the waves differ by N), the first shapes by the SHA-1 of "offsector-wide DTYPE
MxNxK", skipping every N among issue 56's set's sizes and every shape a shapes.txt under bench/results/ lists:
e4m3 two a N, bf16 three a N (14 shapes)."""

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

TAKE = {"e4m3": 2, "bf16": 3}
GRID_TILE = "128x128:s6:c2:g4:pp"
OLD, NEW = "128x128:s6:c2:g4:cl2", "128x256:s4:c2:g8:cl2"


def main(path: str) -> None:
    seen = h100.timed_before()
    pool: Dict[Tuple[str, int], List[Tuple[str, str]]] = {}
    for line in gzip.open(path, "rt"):
        dtype, shape, tile, rb = line.split()
        m, n, _ = (int(x) for x in shape.split("x"))
        if tile != GRID_TILE or m != 1024 or n in h100.SET_N or int(rb.split("=")[1]) % 32 != 16:
            continue
        if f"{dtype} {shape}" in seen:
            continue
        key = hashlib.sha1(f"offsector-wide {dtype} {shape}".encode()).hexdigest()
        pool.setdefault((dtype, n), []).append((key, shape))
    for dtype in ("e4m3", "bf16"):
        for n in sorted({k[1] for k in pool if k[0] == dtype}):
            for _, shape in sorted(pool[(dtype, n)])[:TAKE[dtype]]:
                print(dtype, shape, OLD, NEW)


if __name__ == "__main__":
    main(sys.argv[1])
