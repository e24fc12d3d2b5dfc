"""Draws PLANNED-offline-narrow-screen's shapes (written 2026-12-08 01:30 UTC, before any run).

grid-narrow.txt.gz: every (dtype, M x N x K) at M 256, 384, 512, N 3,072-16,384 in steps of 1,024, K 1,024-14,336
in steps of 16, whose rows start on 32-byte sectors but off 128-byte lines, where 128x224 tiles do not fill the
H100 (so offLineWide leaves it) and main's H100 rule picks the ping-pong tile (kernels/gemm/gpu at 51e0118; the
scan was a scratch test, not kept). Two shapes per (dtype, M), drawn with a fixed seed, then issue 56's own two
bf16 shapes in that scope, read only. Prints shapes.txt.
"""

import gzip
import random
from pathlib import Path

here = Path(__file__).parent
rows = [line.split() for line in gzip.open(here / "grid-narrow.txt.gz", "rt")]
groups: dict[tuple[str, int], list[str]] = {}
for dtype, shape in rows:
    groups.setdefault((dtype, int(shape.split("x")[0])), []).append(shape)
rng = random.Random(20261208)
picked = {key: rng.sample(shapes, 2) for key, shapes in sorted(groups.items())}
# Round robin over the groups, so a call cut short covers each group once first.
for i in range(2):
    for (dtype, _), shapes in picked.items():
        print(dtype, shapes[i])
print("bf16 256x8192x3696")
print("bf16 256x8192x7392")
