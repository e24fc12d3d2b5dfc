"""Prints 2026-12-06-h100-ef-l2-heldout.md's tables from heldout/ and set/ (python3 analyze.py)."""
import csv
import math
import statistics
from pathlib import Path

here = Path(__file__).parent
morning = here.parent / "2026-12-06-h100-bf16-set-retime" / "new"


def rows(path: Path) -> list[list[str]]:
    with open(path / "gemmalone-bf16.csv") as f:
        return [r for r in csv.reader(line for line in f if not line.startswith("#")) if r[0] != "shape" and r[1] == "fused"]


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


# The held-out check: each tile's ratios to cuBLASLt's best, two rounds (opposite orders).
ratios: dict[tuple[str, str], list[float]] = {}
for r in rows(here / "heldout"):
    ratios.setdefault((r[0], r[2]), []).append(float(r[7].split()[0]))
print("| shape | B (MiB) | without :ef | with :ef | with over without |\n|---|---|---|---|---|")
for shape in sorted({s for s, _ in ratios}, key=lambda s: int(s.split("x")[2])):
    _, n, k = (int(x) for x in shape.split("x"))
    plain = [v for (s, t), v in ratios.items() if s == shape and not t.endswith(":ef")][0]
    ef = [v for (s, t), v in ratios.items() if s == shape and t.endswith(":ef")][0]
    mp, me = statistics.mean(plain), statistics.mean(ef)
    print(f"| {shape} | {n * k * 2 >> 20} | {mp:.3f} ({' '.join(f'{x:.3f}' for x in plain)}) | "
          f"{me:.3f} ({' '.join(f'{x:.3f}' for x in ef)}) | {me / mp:.3f} |")

# The whole set with the bound, against the morning's run without it (same card kind, same method).
def load(path: Path) -> dict[str, tuple[str, float, float]]:
    return {r[0]: (r[2], float(r[7].split()[0]), float(r[4])) for r in rows(path)}


now, then = load(here / "set"), load(morning)
for name, d in (("with the bound (main at cc71dd8)", now), ("the morning's rule (9164af9)", then)):
    r = [v[1] for v in d.values()]
    print(f"{name}: {len(r)} shapes, at or above 1.00: {sum(x >= 1 for x in r)}, at 1.05: "
          f"{sum(x >= 1.05 for x in r)}, median {statistics.median(r):.3f}, worst rel. error {max(v[2] for v in d.values()):.2e}")
same = [s for s in now if now[s][0] == then[s][0]]
changed = [s for s in now if now[s][0] != then[s][0]]
print(f"same tile: {len(same)} shapes, now over then geomean {geomean([now[s][1] / then[s][1] for s in same]):.4f}, "
      f"range {min(now[s][1] / then[s][1] for s in same):.3f}-{max(now[s][1] / then[s][1] for s in same):.3f}, "
      f"at or above 1.00 now {sum(now[s][1] >= 1 for s in same)}, then {sum(then[s][1] >= 1 for s in same)}")
print("| shape | B (MiB) | morning | ratio | now | ratio | now over morning |\n|---|---|---|---|---|---|---|")
for s in sorted(changed, key=lambda s: (int(s.split("x")[0]), s)):
    _, n, k = (int(x) for x in s.split("x"))
    print(f"| {s} | {n * k * 2 >> 20} | {then[s][0]} | {then[s][1]:.3f} | {now[s][0]} | {now[s][1]:.3f} | {now[s][1] / then[s][1]:.3f} |")
