"""Prints 2026-12-06-h100-fp8-set-retime.md's counts (python3 analyze.py): per scale mode and by rows,
the untuned tile's ratio to cuBLASLt FP8 (fast accumulation; the CSV's last column), and the lowest.
Tensor scales: e4m3/ (the first call, 100 shapes) and e4m3-rest/ (a second call, 06:17 UTC, 22 of the 29
shapes the first one's deadline cut) together."""
import csv
import statistics
from pathlib import Path

here = Path(__file__).parent
for dt in ("e4m3_row", "e4m3"):
    rows = []
    for sub in (dt, f"{dt}-rest"):
        path = here / sub / f"gemmalone-{dt}.csv"
        if not path.exists():
            continue
        with open(path) as f:
            for r in csv.reader(line for line in f if not line.startswith("#")):
                if r[0] != "shape" and r[1] == "fused":
                    rows.append((r[0], r[2], float(r[10]), float(r[4])))
    ratios = [x for _, _, x, _ in rows]
    print(f"{dt}: {len(rows)} shapes, at or above 1.00: {sum(x >= 1 for x in ratios)}, at 1.05: "
          f"{sum(x >= 1.05 for x in ratios)}, median {statistics.median(ratios):.3f}, worst relative error "
          f"{max(e for *_, e in rows):.2e}")
    by_m: dict[int, list[float]] = {}
    for s, _, x, _ in rows:
        by_m.setdefault(int(s.split("x")[0]), []).append(x)
    print("| rows | shapes | at or above 1.00 | at 1.05 | median |\n|---|---|---|---|---|")
    for m, xs in sorted(by_m.items()):
        print(f"| {m} | {len(xs)} | {sum(x >= 1 for x in xs)} | {sum(x >= 1.05 for x in xs)} | {statistics.median(xs):.3f} |")
    print("lowest: " + "; ".join(f"{s} {t} {x:.3f}" for s, t, x, _ in sorted(rows, key=lambda r: r[2])[:6]))
