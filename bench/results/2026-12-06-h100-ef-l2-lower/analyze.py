"""Prints 2026-12-06-h100-ef-l2-lower.md's table and its keep rule's tests (python3 analyze.py).

Each tile's folder holds four rounds a shape: rounds 1-2 from run.sh's own call (the rule's), 3-4 from
the same script run again on the same warm machine in the next call."""
import csv
import math
import statistics
from pathlib import Path

here = Path(__file__).parent
ratios: dict[tuple[str, str], list[float]] = {}
rel = 0.0
for path in sorted(here.glob("64x*/gemmalone-bf16.csv")):
    with open(path) as f:
        for r in csv.reader(line for line in f if not line.startswith("#")):
            if r[0] != "shape" and r[1] == "fused":
                ratios.setdefault((r[0], r[2]), []).append(float(r[7].split()[0]))
                rel = max(rel, float(r[4]))
shapes = sorted({s for s, t in ratios if not t.endswith(":ef")}, key=lambda s: [int(x) for x in s.split("x")])
tile = {s: t for s, t in ratios if not t.endswith(":ef")}


def mib(s: str) -> float:
    _, n, k = (int(x) for x in s.split("x"))
    return n * k * 2 / 2**20


print("| shape | B (MiB) | tile | without :ef | with :ef | :ef over without (rounds 1-2) | (1-4) |\n|---|---|---|---|---|---|---|")
for s in shapes:
    a, b = ratios[(s, tile[s])], ratios[(s, tile[s] + ":ef")]
    cells = [f"{statistics.mean(v[:2]):.3f} ({' '.join(f'{x:.3f}' for x in v)})" for v in (a, b)]
    print(f"| {s} | {mib(s):.1f} | {tile[s]} | {cells[0]} | {cells[1]} | "
          f"{statistics.mean(b[:2]) / statistics.mean(a[:2]):.3f} | {statistics.mean(b) / statistics.mean(a):.3f} |")
for label, n in (("rounds 1-2 (the rule's)", 2), ("rounds 1-4", 4)):
    gain = [statistics.mean(ratios[(s, tile[s] + ":ef")][:n]) / statistics.mean(ratios[(s, tile[s])][:n]) for s in shapes]
    geo = math.exp(statistics.mean(math.log(x) for x in gain))
    print(f"{label}: at least as fast on {sum(x >= 1 for x in gain)} of 6 (rule: 5), geometric mean {geo:.4f} "
          f"(rule: 1.01), worst {min(gain):.3f} (rule: 0.98)")
print(f"worst relative error {rel:.2e}")
