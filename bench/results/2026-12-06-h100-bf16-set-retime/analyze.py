"""Prints 2026-12-06-h100-bf16-set-retime.md's tables from new/ and old/ (python3 analyze.py)."""
import csv
import math
import statistics
from pathlib import Path

here = Path(__file__).parent


def load(which: str) -> dict[str, tuple[str, float, float]]:
    """shape -> (untuned tile, ratio to cuBLASLt's best, relative error) of the fused rows."""
    out = {}
    with open(here / which / "gemmalone-bf16.csv") as f:
        for row in csv.reader(line for line in f if not line.startswith("#")):
            if row[0] != "shape" and row[1] == "fused":
                out[row[0]] = (row[2], float(row[7].split()[0]), float(row[4]))
    return out


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


new, old = load("new"), load("old")
for name, d in (("today's rule (main at 9164af9)", new), ("call C's build (90f1af8)", old)):
    r = [v[1] for v in d.values()]
    print(f"{name}: {len(r)} shapes, at or above 1.00: {sum(x >= 1 for x in r)}, at 1.05: "
          f"{sum(x >= 1.05 for x in r)}, median {statistics.median(r):.3f}, worst rel. error {max(v[2] for v in d.values()):.2e}")
same = [s for s in new if new[s][0] == old[s][0]]
changed = [s for s in new if new[s][0] != old[s][0]]
print(f"same tile: {len(same)} shapes, today over then geomean {geomean([new[s][1] / old[s][1] for s in same]):.4f}, "
      f"range {min(new[s][1] / old[s][1] for s in same):.3f}-{max(new[s][1] / old[s][1] for s in same):.3f}")
print(f"tile changed: {len(changed)} shapes, geomean {geomean([new[s][1] / old[s][1] for s in changed]):.4f}")
print("| shape | then | ratio | today | ratio | today over then |\n|---|---|---|---|---|---|")
for s in sorted(changed, key=lambda s: (int(s.split("x")[0]), s)):
    print(f"| {s} | {old[s][0]} | {old[s][1]:.3f} | {new[s][0]} | {new[s][1]:.3f} | {new[s][1] / old[s][1]:.3f} |")
rows: dict[int, list[str]] = {}
for s in new:
    rows.setdefault(int(s.split("x")[0]), []).append(s)
print("| M | shapes | today at or above 1.00 | median | then | median |\n|---|---|---|---|---|---|")
for m in sorted(rows):
    ss = rows[m]
    print(f"| {m} | {len(ss)} | {sum(new[s][1] >= 1 for s in ss)} | {statistics.median(new[s][1] for s in ss):.3f} | "
          f"{sum(old[s][1] >= 1 for s in ss)} | {statistics.median(old[s][1] for s in ss):.3f} |")
