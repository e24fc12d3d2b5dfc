"""Prints 2026-12-06-h100-pp-group.md's table and the keep rule's tests (python3 analyze.py)."""
import csv
import math
import statistics
from pathlib import Path

here = Path(__file__).parent
HELD = ["1024x13824x8192", "1024x18432x4096", "1024x22528x8192", "1024x6144x5120",
        "2048x9216x8192", "2048x11264x4096", "2048x29568x8192"]
SEEN = ["1024x1280x8192", "1024x14336x8192", "1024x29568x8192"]
TILES = ["128x128:s6:c2:g4:pp", "128x128:s6:c2:g8:pp", "128x128:s6:c2:g16:pp", "128x224:s5:c2:g16", "128x256:s4:c2:g8"]

ratios: dict[tuple[str, str], list[float]] = {}
rel = 0.0
with open(here / "gemmalone-bf16.csv") as f:
    for r in csv.reader(line for line in f if not line.startswith("#")):
        if r[0] != "shape" and r[1] == "fused":
            ratios.setdefault((r[0], r[2]), []).append(float(r[7].split()[0]))
            rel = max(rel, float(r[4]))
mean = {k: statistics.mean(v) for k, v in ratios.items()}
print("| shape | " + " | ".join(TILES) + " |\n|---|" + "---|" * len(TILES))
for s in HELD + SEEN:
    cells = [f"{mean[(s, t)]:.3f} ({' '.join(f'{x:.3f}' for x in ratios[(s, t)])})" for t in TILES]
    print(f"| {s}{' (seen)' if s in SEEN else ''} | " + " | ".join(cells) + " |")
g4, g8 = TILES[0], TILES[1]
gain = [mean[(s, g8)] / mean[(s, g4)] for s in HELD]
print(f"held out, g8 over g4: {' '.join(f'{x:.3f}' for x in gain)}; at least as fast on {sum(x >= 1 for x in gain)} of 7 "
      f"(rule: 5), geometric mean {math.exp(statistics.mean(math.log(x) for x in gain)):.4f} (rule: 1.01), worst {min(gain):.3f} (rule: 0.985)")
wide = [mean[(s, TILES[3])] / mean[(s, g4)] for s in HELD + SEEN]
print(f"128x224:s5:c2:g16 over the rule's tile, all ten: {' '.join(f'{x:.3f}' for x in wide)}")
print(f"worst relative error {rel:.2e}")
