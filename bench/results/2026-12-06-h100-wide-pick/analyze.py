"""Prints 2026-12-06-h100-wide-pick.md's table and its keep rule's tests (python3 analyze.py).

The CSV holds four rounds a shape and tile: rounds 1-2 from run.sh's own call (the rule's), 3-4 from the
same script run again on the same warm machine in the next call."""
import csv
import math
import statistics
from pathlib import Path

here = Path(__file__).parent
HELD = ["1024x18432x8192", "1024x22528x10240", "1024x26624x8192", "1024x29568x14336",
        "1536x15360x12288", "1536x26624x8192", "1536x29568x10240"]
RULE, WIDE = "128x128:s6:c2:g4:pp", "128x224:s5:c2:g16"

ratios: dict[tuple[str, str], list[float]] = {}
rel = 0.0
with open(here / "gemmalone-bf16.csv") as f:
    for r in csv.reader(line for line in f if not line.startswith("#")):
        if r[0] != "shape" and r[1] == "fused":
            ratios.setdefault((r[0], r[2]), []).append(float(r[7].split()[0]))
            rel = max(rel, float(r[4]))


def geo(xs: list[float]) -> float:
    return math.exp(statistics.mean(math.log(x) for x in xs))


print(f"| shape | {RULE} (the rule) | {WIDE} | over the rule (rounds 1-2) | over the rule (1-4) |\n|---|---|---|---|---|")
for s in HELD:
    a, b = ratios[(s, RULE)], ratios[(s, WIDE)]
    cells = [f"{statistics.mean(v[:2]):.3f} ({' '.join(f'{x:.3f}' for x in v)})" for v in (a, b)]
    print(f"| {s} | {cells[0]} | {cells[1]} | {statistics.mean(b[:2]) / statistics.mean(a[:2]):.3f} "
          f"| {statistics.mean(b) / statistics.mean(a):.3f} |")
for label, n in (("rounds 1-2 (the rule's)", 2), ("rounds 1-4", 4)):
    gain = [statistics.mean(ratios[(s, WIDE)][:n]) / statistics.mean(ratios[(s, RULE)][:n]) for s in HELD]
    print(f"{label}: at least as fast on {sum(x >= 1 for x in gain)} of 7 (rule: 6), geometric mean "
          f"{geo(gain):.4f} (rule: 1.03), worst {min(gain):.3f} (rule: 0.985)")
print(f"worst relative error {rel:.2e}")
