"""How run.sh's screen shapes were chosen (2026-12-07 15:50 UTC, before any run), for the record:

  python3 pick.py ../2026-12-07-h100-offsector-cl2/grid-pp.txt.gz > shapes.txt

The grid is offsector-cl2's (shapes where the H100's rule picks 128x128:s6:c2:g4:pp). Scope: rows off 32-byte
sectors (R % 32 = 16) at the rows where no cluster of two fits whole and the ping-pong tile stays the pick
(128, 320, 384). Per dtype and M, the first two shapes by the SHA-1 of "offsector-rows DTYPE MxNxK", skipping
every N among issue 56's set's sizes and every shape a shapes.txt under bench/results/ lists. Round robin
over the groups since 16:00, before any run (one start had failed, leaving device time for a short call)."""

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

ROWS = (128, 320, 384)
TAKE = 2


def main(path: str) -> None:
    seen = h100.timed_before()
    pool: Dict[Tuple[str, int], List[Tuple[str, str]]] = {}
    for line in gzip.open(path, "rt"):
        dtype, shape, tile, rb = line.split()
        m, n, _ = (int(x) for x in shape.split("x"))
        if tile != "128x128:s6:c2:g4:pp" or m not in ROWS or n in h100.SET_N or int(rb.split("=")[1]) % 32 != 16:
            continue
        if f"{dtype} {shape}" in seen:
            continue
        key = hashlib.sha1(f"offsector-rows {dtype} {shape}".encode()).hexdigest()
        pool.setdefault((dtype, m), []).append((key, shape))
    # Round robin (each group's first shape, then its second), so a call cut short still covers every group.
    for r in range(TAKE):
        for m in ROWS:
            for dtype in ("e4m3", "bf16"):
                picks = sorted(pool.get((dtype, m), []))[:TAKE]
                if r < len(picks):
                    print(dtype, picks[r][1])


if __name__ == "__main__":
    main(sys.argv[1])
