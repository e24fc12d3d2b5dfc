"""How run.sh's held-out shapes were chosen (2026-12-07, before any run), for the record:

  python3 pick.py grid-pp.txt.gz > shapes.txt

grid-pp.txt.gz: lines "DTYPE MxNxK TILE rowbytes%128=R", the shapes of 256-512 rows whose rows start off 128-byte
lines (R 16-112 in steps of 16) where main's untuned rule (at 229121b) picks 128x128:s6:c2:g4:pp on one H100 (132
SMs, its name), printed by a throwaway Go test calling gpu.DefaultTileFor(VariantAGMM, ...) over M 256-512 in
steps of 16, N 2,048-36,864 in steps of 1,024, K whose rows are 128 j + R bytes (j in {16, 24, 32, 48, 64, 96,
112}), bf16 and e4m3 (offsector-3rows' grid, other rows). The ping-pong tile is picked at 256 and 320-512 rows.

The candidate, read after offsector-3rows and the off-line rows screen (2026-12-07-h100-offsector-3rows.md,
2026-12-07-h100-offline-rows-screen.md: 128x224:s5:c2:g16 ahead of the ping-pong tile on 18 of 19 shapes where
its tiles fill the card, behind on 7 of 10 where they do not): 128x224:s5:c2:g16 in the ping-pong tile's place
at 256-512 rows whose rows start off 128-byte lines, where ceil(M/128) x ceil(N/224) >= 132 (fills). Judged only
on rows no run has timed: four row blocks, 400-496 rows (the lead's rows were 256, 320-384 and 512). Per dtype,
4 shapes whose rows start off 32-byte sectors (R % 32 = 16) and 4 on sectors but off lines (R % 32 = 0), all
where the wide tile fills the card, plus 2 controls where it does not (one of each kind; read, not judged).
Every (M, N) pair of a group, skipping every N among issue 56's set's sizes, ordered by the SHA-1 of
"wide-fill-rows DTYPE KIND M N"; each pair's shapes ordered by the SHA-1 of "wide-fill-rows DTYPE MxNxK",
skipping every shape a shapes.txt under bench/results/ lists; the first shape of each pair in turn, then the
second, until the group's count. Lines "DTYPE MxNxK OLD NEW" (card-factors-2's run.sh reads four fields): the
judged shapes first, the dtypes alternating, then the controls."""

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
ROWS = range(400, 497, 16)
OLD, NEW = "128x128:s6:c2:g4:pp", "128x224:s5:c2:g16"
# (kind, judged?) -> shapes a dtype
COUNT = {("offsector", True): 4, ("offline", True): 4, ("offsector", False): 1, ("offline", False): 1}


def fills(m: int, n: int) -> bool:
    """The candidate's threshold: the wide tile's tiles fill the card at least once."""
    return -(-m // 128) * -(-n // 224) >= SMS


def sha(s: str) -> str:
    return hashlib.sha1(s.encode()).hexdigest()


def take(pool: Dict[Tuple[int, int], List[Tuple[str, str]]], salt: str, count: int) -> List[str]:
    pairs = sorted(pool, key=lambda k: sha(f"{salt} {k[0]} {k[1]}"))
    queues = [sorted(pool[k]) for k in pairs]
    out: List[str] = []
    r = 0
    while len(out) < count and any(r < len(q) for q in queues):
        for q in queues:
            if r < len(q) and len(out) < count:
                out.append(q[r][1])
        r += 1
    return out


def main(path: str) -> None:
    seen = h100.timed_before()
    pools: Dict[Tuple[str, str, bool], Dict[Tuple[int, int], List[Tuple[str, str]]]] = {}
    for line in gzip.open(path, "rt"):
        dtype, shape, tile, rb = line.split()
        m, n, _ = (int(x) for x in shape.split("x"))
        r = int(rb.split("=")[1])
        if tile != OLD or m not in ROWS or n in h100.SET_N or r == 0 or f"{dtype} {shape}" in seen:
            continue
        kind = "offsector" if r % 32 == 16 else "offline"
        pools.setdefault((dtype, kind, fills(m, n)), {}).setdefault((m, n), []).append(
            (sha(f"wide-fill-rows {dtype} {shape}"), shape))
    picked: Dict[Tuple[str, bool], List[str]] = {}
    for dtype in ("e4m3", "bf16"):
        for judged in (True, False):
            picked[(dtype, judged)] = []
            for kind in ("offsector", "offline"):
                picked[(dtype, judged)] += take(pools.get((dtype, kind, judged), {}),
                                                f"wide-fill-rows {dtype} {kind}", COUNT[(kind, judged)])
    for judged in (True, False):
        for a, b in zip(picked[("e4m3", judged)], picked[("bf16", judged)]):
            print("e4m3", a, OLD, NEW)
            print("bf16", b, OLD, NEW)


if __name__ == "__main__":
    main(sys.argv[1])
