"""Prints every table of 2026-12-04-h200-streamk-clusters.md from the calls' CSVs:
per shape and tile, the mean of the rounds' ratios to cuBLASLt's best (bf16's
ratio column; FP8's ratio to cuBLASLt FP8 of the same scaling), the geometric
mean per tile, and call G's ratios by timing window.

    python3 bench/results/2026-12-04-h200-streamk-clusters/analyze.py
"""
from __future__ import annotations

import collections
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent


def ratios(path: Path) -> tuple[list[str], dict[tuple[str, str], list[float]], dict[str, str]]:
    """Shapes in order, the ratios of each (shape, tile), each shape's untuned tile."""
    shapes: list[str] = []
    got: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    default: dict[str, str] = {}
    fp8 = "e4m3" in path.name
    for line in path.read_text().splitlines():
        if line.startswith("# default "):
            words = line.split()
            default[words[2]] = words[-1]
        if line.startswith("#") or line.startswith("shape") or ",fused," not in line:
            continue
        row = line.split(",")
        got[(row[0], row[2])].append(float(row[10 if fp8 else 7].split()[0]))
        if row[0] not in shapes:
            shapes.append(row[0])
    return shapes, got, default


def table(title: str, path: Path) -> None:
    shapes, got, default = ratios(path)
    tiles = sorted({t for _, t in got})
    print(f"\n## {title} ({path.relative_to(HERE)})\n")
    print("| shape | " + " | ".join(tiles) + " | untuned |")
    print("|---" * (len(tiles) + 2) + "|")
    per_tile: dict[str, list[float]] = collections.defaultdict(list)
    for s in shapes:
        cells = []
        for t in tiles:
            v = got.get((s, t))
            if v:
                m = sum(v) / len(v)
                per_tile[t].append(m)
                cells.append(f"{m:.3f}")
            else:
                cells.append("-")
        print(f"| {s} | " + " | ".join(cells) + f" | {default.get(s, '?')} |")
    gm = [f"{math.exp(sum(map(math.log, per_tile[t])) / len(per_tile[t])):.3f} ({len(per_tile[t])})"
          if per_tile[t] else "-" for t in tiles]
    print("| geometric mean | " + " | ".join(gm) + " | |")


def windows() -> None:
    print("\n## Call G: the same kernels timed in 0.2 s and 2 s windows (one process each, in turn)\n")
    print("| shape | tile | 0.2 s | 2 s | 0.2 s | µs at 0.2 s, 2 s, 0.2 s |")
    print("|---|---|---|---|---|---|")
    for path in sorted((HERE / "call-g/g/window").glob("*.csv")):
        cells: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
        for line in path.read_text().splitlines():
            if ",fused," in line:
                row = line.split(",")
                cells[row[2]].append((float(row[7].split()[0]), float(row[5])))
        for tile, runs in cells.items():
            print(f"| {path.stem} | {tile} | " + " | ".join(f"{r:.3f}" for r, _ in runs)
                  + " | " + ", ".join(f"{us:.0f}" for _, us in runs) + " |")


def main() -> None:
    table("Call E: stream-K in clusters, float64 check on ragged shapes (0.05 s, one round)",
          HERE / "call-e/e/check/gemmalone-56/gemmalone-bf16.csv")
    table("Call E: stream-K in clusters against :st and :cl2 (0.2 s, two rounds)",
          HERE / "call-e/e/bf16/gemmalone-56/gemmalone-bf16.csv")
    table("Call E: FP8 row scales at K = 1,024 (0.2 s, two rounds)",
          HERE / "call-e/e/e4m3_row/gemmalone-56/gemmalone-e4m3_row.csv")
    table("Call F: held out, where the rule now takes :cl2:st (0.2 s, two rounds)",
          HERE / "call-f/f/st/gemmalone-56/gemmalone-bf16.csv")
    table("Call F: ragged token counts (0.1 s, one round)", HERE / "call-f/f/ragged/gemmalone-56/gemmalone-bf16.csv")
    table("Call F: FP8 row scales at K = 2,048 (0.2 s, two rounds)", HERE / "call-f/f/row/gemmalone-56/gemmalone-e4m3_row.csv")
    table("Call F: FP8 tensor scales at K = 1,024 and 2,048 (0.2 s, two rounds)",
          HERE / "call-f/f/tensor/gemmalone-56/gemmalone-e4m3.csv")
    windows()
    table("Call G: ragged token counts (0.2 s, two rounds)", HERE / "call-g/g/ragged/gemmalone-56/gemmalone-bf16.csv")
    table("Call H: the set's products of 2,500 GFLOP or more (2 s windows, one round)",
          HERE / "call-h/h/gemmalone-56/gemmalone-bf16.csv")


if __name__ == "__main__":
    main()
