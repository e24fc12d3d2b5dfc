"""Read afterwards (not part of run.sh's rule): which of the three tiles timed at a shape the untuned rule's
cost (waves x area over the tile's factor, gpu.DefaultTile's) takes with the H200's factors (main's
tileEfficiency) and with the H100's (2026-12-06-h100-tile-factors.md), against the fastest measured:

  for f in ppr ppx ppy; do tar xzf $f.tgz -C /tmp; done
  python3 factors.py ../2026-12-06-h100-pp-group/gemmalone-bf16.csv ../2026-12-06-h100-wide-pick/gemmalone-bf16.csv \\
      /tmp/ppr/t/gemmalone-56/gemmalone-bf16.csv /tmp/ppx/t/gemmalone-56/gemmalone-bf16.csv \\
      /tmp/ppy/t/gemmalone-56/gemmalone-bf16.csv

Only these three tiles are weighed (the whole rule also weighs stream-K, 256x160 and 128x160, untimed at
these shapes). A shape in several CSVs counts with its last file's rows. Standard library only."""
import math
import os
import sys
from collections import Counter
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import gemmalone_table as gt  # noqa: E402

PP, W, B = "128x128:s6:c2:g4:pp", "128x224:s5:c2:g16", "128x256:s4:c2:g8"
DIMS = {PP: (128, 128), W: (128, 224), B: (128, 256)}
FACTORS = {"H200": {PP: 0.965, W: 0.946, B: 1.0}, "H100": {PP: 0.896, W: 0.936, B: 1.0}}
SMS = 132


def cost(t: str, m: int, n: int, f: Dict[str, float]) -> float:
    bm, bn = DIMS[t]
    tiles = -(-m // bm) * -(-n // bn)
    return -(-tiles // SMS) * bm * bn / f[t]


def short(t: str) -> str:
    return t.split(":")[0] + (":pp" if t.endswith(":pp") else "")


def main(paths: List[str]) -> int:
    shapes = {}
    for p in paths:
        for (_, dt), s in gt.read([p]).items():
            if dt == "bf16" and s.ratio(PP) and s.ratio(W):
                shapes[s.shape] = s
    best_count: Counter = Counter()
    loss: Dict[str, List[float]] = {c: [] for c in FACTORS}
    print("| shape | " + " | ".join(short(t) for t in DIMS) + " | H200 factors' pick (of the fastest) |"
          " H100 factors' pick (of the fastest) |")
    print("|---|---|---|---|---|---|")
    for name, s in sorted(shapes.items(), key=lambda x: x[1].mnk):
        m, n, _ = s.mnk
        cands = [t for t in DIMS if s.ratio(t)]
        best = max(cands, key=lambda t: s.ratio(t) or 0.0)
        cells = []
        for card, f in FACTORS.items():
            pick = min(cands, key=lambda t: cost(t, m, n, f))
            r = (s.ratio(pick) or 0.0) / (s.ratio(best) or 1.0)
            loss[card].append(r)
            best_count[card] += pick == best
            cells.append(f"{short(pick)} ({r:.3f})")
        print(f"| {name} | " + " | ".join(gt.fmt_ratio(s.ratio(t)) for t in DIMS) + " | " + " | ".join(cells) + " |")
    print()
    for card, xs in loss.items():
        g = math.exp(sum(map(math.log, xs)) / len(xs))
        print(f"- {card} factors: the fastest on {best_count[card]} of {len(xs)}, within 3% on "
              f"{sum(x >= 0.97 for x in xs)}, the pick at {g:.3f} of the fastest (geometric mean)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
