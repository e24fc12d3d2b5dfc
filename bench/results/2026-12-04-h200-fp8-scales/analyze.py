"""Prints every table of 2026-12-04-h200-fp8-scales.md from the calls' CSVs:
the A/B runs' ratios and times per build (calls I, M), the long FP8 products
in 2 s windows (J), back-to-back, per-call and filled timings and clocks of
the ping-pong tile (K, L), ncu's cycles (J, L) and the row-scale short-loop
check (N).

    python3 bench/results/2026-12-04-h200-fp8-scales/analyze.py
"""
from __future__ import annotations

import collections
import csv
import datetime
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "experiments"))
import ab_table  # noqa: E402  (bench/experiments/ab_table.py)


def fused_rows(path: Path) -> list[list[str]]:
    """gemmalone's rows of our kernel (impl fused or fused-plain)."""
    rows = []
    with path.open() as f:
        for row in csv.reader(f):
            if len(row) >= 11 and not row[0].startswith("#") and row[1].startswith("fused"):
                rows.append(row)
    return rows


def fp8_ratio(row: list[str]) -> float:
    """The ratio to cuBLASLt FP8 of the same scaling (the last column)."""
    return float(row[10].split()[0])


def ab(call: str, part: str) -> None:
    """One ab-gemmalone.sh part: bench/experiments/ab_table.py's table (per
    shape and tile, each build's rounds, B's mean time over A's)."""
    base = HERE / call / call[-1] / part / "ab"
    print(f"\n## call {call[-1].upper()}, {part}")
    print("\n".join(ab_table.table(ab_table.read(base / "A.csv"), ab_table.read(base / "B.csv"))))


def per_tile(path: Path, title: str) -> None:
    """A gemmalone-56.sh CSV: per shape and tile, each round's ratio/µs."""
    got: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for row in fused_rows(path):
        got[(row[0], row[2])].append(f"{fp8_ratio(row):.3f}/{float(row[5]):.1f}")
    print(f"\n## {title}\n| shape | tile | rounds (ratio/µs) |\n|---|---|---|")
    for key in sorted(got):
        print(f"| {key[0]} | {key[1]} | {' '.join(got[key])} |")


def modes(call: str, pattern: str, title: str) -> None:
    """Call K's and L's timings: per file, each row's impl, tile, µs, ratio."""
    print(f"\n## {title}\n| file | impl | tile | µs | ratio |\n|---|---|---|---|---|")
    for path in sorted((HERE / call / call[-1]).glob(pattern)):
        for row in fused_rows(path):
            print(f"| {path.stem} | {row[1]} | {row[2]} | {float(row[5]):.1f} | {fp8_ratio(row):.3f} |")


def clocks() -> None:
    """Call K: the median SM clock and power while each 2 s run ran."""
    base = HERE / "call-k" / "k"
    marks = [line.split() for line in (base / "power-times.txt").read_text().splitlines()]
    samples = []
    for line in (base / "smi.csv").read_text().splitlines():
        cells = [c.strip() for c in line.split(",")]
        try:
            t = datetime.datetime.strptime(cells[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            continue
        samples.append((t.timestamp(), float(cells[1].split()[0]), float(cells[3].split()[0])))
    print("\n## call K: clocks while the ping-pong tile ran 2 s a dtype (cuBLASLt's runs between)")
    print("| dtype | samples | median SM MHz | median W |\n|---|---|---|---|")
    for i in range(0, len(marks) - 1, 2):
        lo, hi = float(marks[i][1]), float(marks[i + 1][1])
        sel = [(mhz, w) for t, mhz, w in samples if lo <= t <= hi]
        print(f"| {marks[i][0]} | {len(sel)} | {statistics.median(m for m, _ in sel):.0f} | "
              f"{statistics.median(w for _, w in sel):.1f} |")


def ncu() -> None:
    """Calls J (ncu's default: caches flushed) and L (--cache-control none)."""
    print("\n## ncu, 128x128:s6:c2:g4:pp at 16384x8192x1024")
    print("| call | dtype | cycles | µs | GHz | IPC |\n|---|---|---|---|---|---|")
    for call in ("call-j/j", "call-l/l"):
        for dtype in ("e4m3", "e4m3_row"):
            text = (HERE / call / "ncu" / f"ours-{dtype}-128x128_s6_c2_g4_pp-details.txt").read_text()
            val = {}
            for line in text.splitlines():
                for name in ("Elapsed Cycles", "Duration", "SM Frequency", "Executed Ipc Active"):
                    if line.strip().startswith(name):
                        val[name] = line.split()[-1]
            print(f"| {call[-1].upper()} | {dtype} | {val['Elapsed Cycles']} | {val['Duration']} | "
                  f"{val['SM Frequency']} | {val['Executed Ipc Active']} |")


def main() -> None:
    for part in ("check-row", "check-tensor", "row", "tensor"):
        ab("call-i", part)
    for dtype in ("e4m3_row", "e4m3"):
        per_tile(HERE / "call-j" / "j" / dtype / "gemmalone-56" / f"gemmalone-{dtype}.csv",
                 f"call J: {dtype}, products of 5,000 GFLOP or more, 2 s windows")
    modes("call-k", "sustain-*.csv", "call K: 0.2 s windows, launched as dependents (fused) and plainly")
    modes("call-k", "iters-*.csv", "call K: per call (50 calls, median)")
    modes("call-k", "power-*.csv", "call K: 2 s windows")
    clocks()
    modes("call-l", "fill*.csv", "call L: per call, with (fill65536) and without a 64 MiB fill before each")
    ncu()
    for part in ("check-row", "check-tensor", "row", "tensor"):
        ab("call-m", part)
    per_tile(HERE / "call-n" / "n" / "gemmalone-56" / "gemmalone-e4m3_row.csv",
             "call N: row scales at K 1,024-2,048, two rounds of 0.2 s")


if __name__ == "__main__":
    main()
