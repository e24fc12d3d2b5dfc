"""How run.sh's held-out shapes were chosen (2026-12-07 15:05 UTC, before any run; committed in acbd046 at 15:11), for the record:

  python3 pick.py ../2026-12-07-h100-offsector-cl2/grid-pp.txt.gz > shapes.txt

The grid is offsector-cl2's (shapes where the H100's rule picked 128x128:s6:c2:g4:pp before the clustered twin;
where rows start off 32-byte sectors, at a multiple of 256 rows up to 1,024, it now picks the twin
128x128:s6:c2:g4:cl2). The candidate, read after offsector-wide-1024 (2026-12-07-h100-offsector-wide-1024.md):
128x256:s4:c2:g8:cl2 in the twin's place where its tiles fill the card at least once, ceil(M/128) x ceil(N/256)
>= 132 SMs. Judged only on rows other than 1,024 (that run's rows; the lead came from them): 256, 512 and 768,
every (dtype, M, N) of the grid in that scope where the candidate changes the pick, round robin over those
(M, N) pairs, each pair's shapes in the order of the SHA-1 of "offsector-fill DTYPE MxNxK", until 8 shapes a
dtype. Controls (read, not judged): one shape a (dtype, M, N) where the candidate keeps the twin, the same rows.
As the earlier plans, every N among issue 56's set's sizes and every shape a shapes.txt under bench/results/
lists are skipped. Lines: "DTYPE MxNxK OLD NEW" (card-factors-2's run.sh reads four fields); judge.py tells a
control from a judged shape by fills() below, the candidate itself."""

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

SMS = 132
JUDGED_PER_DTYPE = 8
GRID_TILE = "128x128:s6:c2:g4:pp"
OLD, NEW = "128x128:s6:c2:g4:cl2", "128x256:s4:c2:g8:cl2"


def fills(m: int, n: int) -> bool:
    """The candidate: the wide tile's count reaches the card's SMs."""
    return -(-m // 128) * -(-n // 256) >= SMS


def main(path: str) -> None:
    seen = h100.timed_before()
    pool: Dict[Tuple[str, int, int], List[Tuple[str, str]]] = {}
    for line in gzip.open(path, "rt"):
        dtype, shape, tile, rb = line.split()
        m, n, _ = (int(x) for x in shape.split("x"))
        if tile != GRID_TILE or m % 256 or m >= 1024 or n in h100.SET_N or int(rb.split("=")[1]) % 32 != 16:
            continue
        if f"{dtype} {shape}" in seen:
            continue
        key = hashlib.sha1(f"offsector-fill {dtype} {shape}".encode()).hexdigest()
        pool.setdefault((dtype, m, n), []).append((key, shape))
    judged: Dict[str, List[str]] = {"e4m3": [], "bf16": []}
    for dtype in judged:
        pairs = sorted(k for k in pool if k[0] == dtype and fills(k[1], k[2]))
        queues = [sorted(pool[k]) for k in pairs]
        r = 0
        while len(judged[dtype]) < JUDGED_PER_DTYPE and any(r < len(q) for q in queues):
            for q in queues:
                if r < len(q) and len(judged[dtype]) < JUDGED_PER_DTYPE:
                    judged[dtype].append(q[r][1])
            r += 1
    # Judged lines first, the dtypes alternating (a deadline cuts both alike), then the controls.
    for a, b in zip(judged["e4m3"], judged["bf16"]):
        print("e4m3", a, OLD, NEW)
        print("bf16", b, OLD, NEW)
    for dtype in judged:
        for k in sorted(k for k in pool if k[0] == dtype and not fills(k[1], k[2])):
            print(dtype, sorted(pool[k])[0][1], OLD, NEW)


if __name__ == "__main__":
    main(sys.argv[1])
