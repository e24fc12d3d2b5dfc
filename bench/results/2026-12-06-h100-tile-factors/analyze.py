"""Prints 2026-12-06-h100-tile-factors.md's tables (python3 analyze.py): per shape each tile's speed over
128x256:cl2's, the factors (geometric means over the 23 shapes) and 128x224:g4 over 128x128:pp, beside
the H200's from 2026-12-03 call P (../2026-12-03-h200-w1-plain-matmulrs/call-p, the same shapes)."""
import csv
import math
import statistics
from pathlib import Path

here = Path(__file__).parent
REF, PP, W4, W16 = "128x256:s4:c2:g8:cl2", "128x128:s6:c2:g4:pp", "128x224:s5:c2:g4", "128x224:s5:c2:g16"


def read(path: Path) -> dict[str, dict[str, float]]:
    rows: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for r in csv.reader(line for line in f if not line.startswith("#")):
            if len(r) > 7 and r[0] != "shape" and r[1] == "fused":
                rows.setdefault(r[0], {})[r[2]] = float(r[7].split()[0])
    return rows


h100 = read(here / "gemmalone-bf16.csv")
h200 = read(here.parent / "2026-12-03-h200-w1-plain-matmulrs" / "call-p" / "gemmalone-bf16.csv")
shapes = [s for s in h100 if len(h100[s]) == 4]
print("| shape | 128x256:cl2 / cuBLASLt | 128x224:g4 | 128x224:g16 | 128x128:pp | 128x224:g4 over pp | H200: 128x224:g4 over pp |")
print("|---|---|---|---|---|---|---|")
for s in shapes:
    d, e = h100[s], h200.get(s, {})
    h2 = f"{e[W4] / e[PP]:.3f}" if W4 in e and PP in e else "-"
    print(f"| {s} | {d[REF]:.3f} | {d[W4] / d[REF]:.3f} | {d[W16] / d[REF]:.3f} | {d[PP] / d[REF]:.3f} | {d[W4] / d[PP]:.3f} | {h2} |")


def geo(rows: dict[str, dict[str, float]], t: str) -> float:
    return math.exp(statistics.mean(math.log(rows[s][t] / rows[s][REF]) for s in shapes))


for name, rows, tiles in (("1 x H100", h100, (W4, W16, PP)), ("1 x H200 (call P)", h200, (W4, PP))):
    f = {t: geo(rows, t) for t in tiles}
    print(f"{name}: " + ", ".join(f"{t} {v:.3f}" for t, v in f.items()) + f"; 128x224:g4 over pp {f[W4] / f[PP]:.3f}")
print(f"H100: 128x224:g4 ahead of pp on {sum(h100[s][W4] >= h100[s][PP] for s in shapes)} of {len(shapes)}")
