#!/usr/bin/env python3
"""bench/gemmalone_table.py CSV...: issue 56's table from bin/gemmalone's CSVs.

Per shape and dtype: cuBLASLt's best time (the fastest of its algorithms'
rows), the best tile and its ratio, the default tile (gemmalone's
"# default SHAPE DTYPE: TILE" line, else --default) and its ratio, how far
the default is behind the best and whether it is within 3% (issue 56's
"untuned defaults" bar) and what limits the best tile (limit); then, per
dtype, how many shapes the best and the default tile run at or above
cuBLASLt and at 1.05x (the first bar), and their medians; then, per row
count M, the tile within 3% of the best on the most shapes: a proposed
rule, beside the default's record.

A ratio is gemmalone's: cuBLASLt's best algorithm timed right before and
after the tile, over the tile's time (above 1 the tile is faster); for FP8
dtypes the ratio to cuBLASLt's FP8 product (ratio_to_cublaslt_fp8) where
the row has one. Ratios, not times, compare tiles: each carries the clock
of its own moment. A tile measured more than once (repeated runs, first and
last) counts with the geometric mean of its ratios.

Reads every gemmalone format so far: the current 11 columns, the 8 of
2026-11-22/23 (tile names as "128x256x64 s4 c2 g8 pingpong bK", read as
"128x256:s4:c2:g8:pp"), comment, header and "==" lines between runs, rows
of runs appended into one file. Standard library only.
"""

import argparse
import csv
import math
import re
import statistics
import sys
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

# gpu.DefaultTile as of this script's writing: for CSVs without "# default" lines.
DEFAULTS = {"bf16": "128x256:s4:c2:g8:cl2", "f16": "128x256:s4:c2:g8:cl2", "e4m3": "128x256:s4:c2:g4",
            "e4m3_row": "128x256:s4:c2:g4"}
# Dense tensor-core peaks of an H100/H200 SXM, TFLOP/s.
PEAK = {"bf16": 989.0, "f16": 989.0, "e4m3": 1979.0, "e4m3_row": 1979.0}
# HBM bandwidth by the GPU the run's header names, TB/s (SXM parts); another
# GPU's runs take the H200's, which the limit cell then names.
HBM = {"H200": 4.8, "H100": 3.35}
# Waves filled to this share or more (units over waves x SMs) are not called a tail.
FULL_WAVE = 0.9
WITHIN = 0.03

_OLD_TILE = re.compile(r"^(\d+)x(\d+)x64 s(\d+) c(\d+) g(\d+)((?: \w+)*)$")
_DEFAULT = re.compile(r"^#\s*default (\S+) (\S+): (\S+)")
_RUN = re.compile(r"^#\s*[^,]*, \d+ SMs, (\w+),")
_GPU = re.compile(r"^#\s*NVIDIA (H\d+)[^,]*, (\d+) SMs")
_TILE = re.compile(r"^(\d+)x(\d+)(.*)$")
_FLOAT = re.compile(r"^\s*([0-9.]+(?:e[-+]?\d+)?)")


def tile_name(config: str) -> str:
    """The current name of a tile (hopper.Tile.String), old names read."""
    m = _OLD_TILE.match(config.strip())
    if not m:
        return config.strip()
    bm, bn, s, c, g, rest = m.groups()
    words = rest.split()
    name = f"{bm}x{bn}:s{s}:c{c}:g{g}"
    if "pingpong" in words:
        name += ":pp"
    if "bN" in words:
        name += ":bn"
    for w in words:
        if w.startswith("cl"):
            name += ":" + w
    return name


def num(cell: str) -> Optional[float]:
    m = _FLOAT.match(cell)
    return float(m.group(1)) if m else None


def geomean(xs: List[float]) -> Optional[float]:
    """The geometric mean of xs (a shape's rounds, a tile's gains), None if empty."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


class Shape:
    """What the CSVs say of one shape and dtype."""

    def __init__(self, shape: str, dtype: str):
        self.shape, self.dtype = shape, dtype
        self.lt: Dict[str, float] = {}  # the reference's algorithms: algoN -> µs (the fastest seen)
        self.ratios: Dict[str, List[float]] = defaultdict(list)
        self.us: Dict[str, List[float]] = defaultdict(list)
        self.failed: Dict[str, str] = {}  # tile -> WRONG or why it was skipped
        self.default: Optional[str] = None
        # gemmalone -rs: (tile, "rs" or "rs-regs") -> each row's time over
        # the plain row's just before it in the same process, minus 1.
        self.rs_cost: Dict[Tuple[str, str], List[float]] = defaultdict(list)
        self.last_us: Dict[str, float] = {}  # tile -> its last plain row's µs
        self.gpu, self.sms = "H200", 132  # the run's header's, where it names them

    @property
    def mnk(self) -> Tuple[int, int, int]:
        m, n, k = (int(x) for x in self.shape.split("x"))
        return m, n, k

    def ratio(self, tile: str) -> Optional[float]:
        return geomean(self.ratios.get(tile) or [])

    def best(self) -> Optional[Tuple[str, float]]:
        got: List[Tuple[str, float]] = []
        for t in self.ratios:
            r = self.ratio(t)
            if r is not None:
                got.append((t, r))
        return max(got, key=lambda x: x[1]) if got else None

    def least_bytes(self, row_scales: bool = False) -> int:
        """A and B read once and C (two-byte) written once; with row_scales
        also a float per row of A and per column of B."""
        m, n, k = self.mnk
        one_byte = self.dtype.startswith("e4m3")
        return (1 if one_byte else 2) * (m + n) * k + 2 * m * n + (4 * (m + n) if row_scales else 0)

    def tflops(self, tile: str) -> Optional[float]:
        us = self.us.get(tile)
        if not us:
            return None
        m, n, k = self.mnk
        return 2.0 * m * n * k / min(us) / 1e6

    def limit(self, tile: str) -> str:
        """What bounds tile's product, by the roofline of the shape: HBM
        where its least bytes (A and B once, C once) take longer at the
        GPU's bandwidth than its multiply-adds at the dense peak, with the
        share of that bandwidth the tile's fastest time reached; else the
        tensor cores, with the waves where the tile's units (tiles, or
        split-K's slices) fill under 90% of them, the last wave part-empty
        (stream-K shares the last wave out)."""
        us = self.us.get(tile)
        if not us:
            return "-"
        m, n, k = self.mnk
        nbytes = self.least_bytes()
        bw = HBM.get(self.gpu, HBM["H200"]) * 1e12
        t_mem, t_math = nbytes / bw, 2.0 * m * n * k / (PEAK.get(self.dtype, 989.0) * 1e12)
        if t_mem >= t_math:
            return f"memory: {nbytes / (min(us) * 1e-6) / bw:.0%} of {bw / 1e12:.2g} TB/s"
        g = _TILE.match(tile)
        if not g:
            return "tensor"
        bm, bn, opts = int(g.group(1)), int(g.group(2)), g.group(3).split(":")
        if "st" in opts:
            return "tensor (stream-K)"
        units = -(-m // bm) * -(-n // bn)
        for o in opts:
            if o.startswith("sk") and o[2:].isdigit():
                units *= int(o[2:])
        waves = -(-units // self.sms)
        fill = units / (waves * self.sms)
        if fill >= FULL_WAVE:
            return "tensor"
        if waves == 1:
            return f"tensor; {units} of {self.sms} SMs busy"
        return f"tensor; {waves} waves, the last {units - (waves - 1) * self.sms}/{self.sms}"


class MixedCards(ValueError):
    """Rows of one shape and dtype from runs on different GPUs: its ratios would
    average two cards' (an H100's power cap and an H200's move the same
    kernels differently)."""


def read(paths: List[str]) -> Dict[Tuple[str, str], Shape]:
    shapes: Dict[Tuple[str, str], Shape] = {}
    cards: Dict[Tuple[str, str], Tuple[str, str]] = {}  # (shape, dtype) -> its rows' GPU and first file

    run: Dict[str, str] = {"gpu": "H200", "sms": "132"}  # the GPU of the run being read (its header line)

    def get(shape: str, dtype: str) -> Shape:
        if (shape, dtype) not in shapes:
            shapes[(shape, dtype)] = Shape(shape, dtype)
        s = shapes[(shape, dtype)]
        s.gpu, s.sms = run["gpu"], int(run["sms"])
        return s

    for path in paths:
        run_dtype = "bf16"
        with open(path, newline="") as f:
            for row in csv.reader(f):
                if not row or not row[0].strip():
                    continue
                first = row[0].strip()
                if first.startswith("#"):
                    line = ",".join(row)
                    if m := _DEFAULT.match(line):
                        get(m.group(1), m.group(2)).default = m.group(3)
                    elif m := _RUN.match(line):
                        run_dtype = m.group(1)
                        if g := _GPU.match(line):
                            run["gpu"], run["sms"] = g.group(1), g.group(2)
                    continue
                if first in ("shape", "mm") or first.startswith("==") or len(row) < 8 or \
                        not re.match(r"^\d+x\d+x\d+$", first):
                    continue
                impl, config, spill, us_cell, ratio_cell = row[1], row[2], row[3], row[5], row[7]
                dtype = row[8] if len(row) > 8 and row[8] not in ("", "-") else run_dtype
                gpu, seen_in = cards.setdefault((first, dtype), (run["gpu"], path))
                if gpu != run["gpu"]:
                    raise MixedCards(f"{first} {dtype} has rows of two GPUs: {gpu} ({seen_in}) and {run['gpu']} ({path}); "
                                     "give one card's CSVs")
                us = num(us_cell) if us_cell != "-" else None
                if impl.startswith("cublaslt"):
                    # The ratio's reference: cuBLASLt bf16/f16, or FP8 with fast
                    # accumulation in an FP8 run (its rows say e4m3, the run's
                    # dtype may be e4m3_row).
                    fp8_run = run_dtype.startswith("e4m3")
                    ref = "cublaslt-fp8" if fp8_run else "cublaslt"
                    if impl == ref and us is not None:
                        s = get(first, run_dtype)
                        s.lt[config] = min(us, s.lt.get(config, math.inf))
                    continue
                if impl != "fused":
                    continue
                tile = tile_name(config)
                s = get(first, dtype)
                if spill.startswith("rs"):
                    # -rs's rows, "rs" (rows by TMA stores) and "rs-regs" (by each
                    # warp's stores): the same tile as a one-rank reduce-scatter,
                    # costed against the plain row before them, not a tile of its own.
                    if us is None:
                        s.failed[f"{tile} {spill}"] = ratio_cell if ratio_cell not in ("", "-") else (row[7] or "failed")
                    elif tile in s.last_us:
                        s.rs_cost[(tile, spill)].append(us / s.last_us[tile] - 1)
                    continue
                if us is None:
                    s.failed[tile] = ratio_cell if ratio_cell not in ("", "-") else (row[7] or "failed")
                    continue
                s.last_us[tile] = us
                ratio = num(ratio_cell)
                if dtype.startswith("e4m3") and len(row) > 10 and num(row[10]) is not None:
                    ratio = num(row[10])
                if ratio is None:
                    continue
                s.ratios[tile].append(ratio)
                s.us[tile].append(us)
    return shapes


def fmt_ratio(r: Optional[float]) -> str:
    return "-" if r is None else f"{r:.3f}"


def over(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """a / b, or None where either is missing (or b is 0): one tile's ratio over another's."""
    return a / b if a is not None and b else None


def default_of(s: Shape, override: Optional[str]) -> str:
    if override:
        return override
    return s.default or DEFAULTS.get(s.dtype) or DEFAULTS["bf16"]


def table(shapes: List[Shape], override: Optional[str]) -> List[str]:
    out = ["| shape (M x N x K) | dtype | cuBLASLt best µs (algo) | best tile | ratio | TFLOP/s (of peak) | "
           "default tile | ratio | default behind best | within 3% | limit (best tile) |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for s in shapes:
        lt = min(s.lt.items(), key=lambda x: x[1]) if s.lt else None
        lt_cell = f"{lt[1]:.1f} ({lt[0]})" if lt else "-"
        best = s.best()
        d = default_of(s, override)
        dr = s.ratio(d)
        if best is None:
            out.append(f"| {s.shape} | {s.dtype} | {lt_cell} | - | - | - | {d} | - | - | no tile measured | - |")
            continue
        tf = s.tflops(best[0])
        tf_cell = f"{tf:.0f} ({tf / PEAK.get(s.dtype, 989.0):.0%})" if tf else "-"
        if dr is None:
            behind, verdict = "-", "default " + ("failed: " + s.failed[d] if d in s.failed else "not measured")
        else:
            gap = best[1] / dr - 1
            behind, verdict = f"{gap:+.1%}", "yes" if gap <= WITHIN + 1e-9 else "**no**"
        out.append(f"| {s.shape} | {s.dtype} | {lt_cell} | {best[0]} | {fmt_ratio(best[1])} | {tf_cell} | {d} | "
                   f"{fmt_ratio(dr)} | {behind} | {verdict} | {s.limit(best[0])} |")
    return out


def summary(shapes: List[Shape], override: Optional[str]) -> List[str]:
    """Issue 56's first bar per dtype: of the shapes with a timed tile, how
    many the best tile and the default tile run at or above cuBLASLt
    (ratio 1.00) and at 1.05x or more, and their median ratios."""
    out = ["| dtype | shapes | best tile: at or above 1.00x | at 1.05x | median | default: at or above 1.00x | "
           "at 1.05x | median |", "|---|---|---|---|---|---|---|---|"]
    by: Dict[str, List[Shape]] = defaultdict(list)
    for s in shapes:
        if s.best() is not None:
            by[s.dtype].append(s)

    def cells(rs: List[float]) -> str:
        if not rs:
            return "- | - | -"
        return f"{sum(r >= 1.0 for r in rs)} | {sum(r >= 1.05 for r in rs)} | {statistics.median(rs):.3f}"
    for dtype, group in sorted(by.items()):
        best = [b[1] for b in (s.best() for s in group) if b is not None]
        out.append(f"| {dtype} | {len(group)} | {cells(best)} | {cells(default_ratios(group, override))} |")
    return out


def default_ratios(shapes: List[Shape], override: Optional[str]) -> List[float]:
    """The default tile's ratio of each shape that timed it."""
    return [r for r in (s.ratio(default_of(s, override)) for s in shapes) if r is not None]


def rule(shapes: List[Shape], override: Optional[str]) -> List[str]:
    """Per dtype and M: the tile within 3% of each shape's best on the most
    shapes (ties: the smaller worst gap, then the smaller mean gap), beside
    the default's record; then the rows merged where the proposal is the
    same tile."""
    out = ["| dtype | M | shapes | proposed tile | within 3% on | its worst gap | default | within 3% on | "
           "its worst gap |", "|---|---|---|---|---|---|---|---|---|"]
    merged: Dict[str, List[Tuple[int, str]]] = defaultdict(list)
    groups: Dict[Tuple[str, int], List[Shape]] = defaultdict(list)
    for s in shapes:
        if s.best() is not None:
            groups[(s.dtype, s.mnk[0])].append(s)

    def record(tile: str, group: List[Shape]) -> Tuple[int, float, float]:
        gaps = []
        for s in group:
            r = s.ratio(tile)
            best = s.best()
            gaps.append(math.inf if r is None or best is None else best[1] / r - 1)
        within = sum(g <= WITHIN + 1e-9 for g in gaps)
        finite = [g for g in gaps if g != math.inf]
        mean = sum(finite) / len(finite) if finite else math.inf
        return within, max(gaps), mean

    def gap_cell(g: float) -> str:
        return "not measured everywhere" if g == math.inf else f"{g:+.1%}"

    for (dtype, m), group in sorted(groups.items()):
        tiles = sorted({t for s in group for t in s.ratios})
        scored = sorted(((record(t, group), t) for t in tiles), key=lambda x: (-x[0][0], x[0][1], x[0][2], x[1]))
        (within, worst, _), tile = scored[0]
        d = default_of(group[0], override)
        dwithin, dworst, _ = record(d, group)
        out.append(f"| {dtype} | {m} | {len(group)} | {tile} | {within}/{len(group)} | {gap_cell(worst)} | {d} | "
                   f"{dwithin}/{len(group)} | {gap_cell(dworst)} |")
        merged[dtype].append((m, tile))
    out.append("")
    for dtype, rows in merged.items():
        spans: List[Tuple[int, int, str]] = []
        for m, tile in rows:
            if spans and spans[-1][2] == tile:
                spans[-1] = (spans[-1][0], m, tile)
            else:
                spans.append((m, m, tile))
        parts = [f"M {lo}" + (f"-{hi}" if hi != lo else "") + f": {tile}" for lo, hi, tile in spans]
        out.append(f"Proposed rule, {dtype} (measured rows only; between them the bound is a choice): " +
                   "; ".join(parts))
    return out


def rs_table(shapes: List[Shape]) -> List[str]:
    """gemmalone -rs: per shape and tile, what the one-rank reduce-scatter's
    epilogue costs over the plain tile (issue 56: at most 2%), each round's
    figure (a row's time over the plain row's right before it, in the same
    process), rows by TMA stores and by each warp's stores."""
    out = ["| shape (M x N x K) | dtype | tile | rows by TMA: cost | rows by each warp's stores: cost | within 2% |",
           "|---|---|---|---|---|---|"]
    for s in shapes:
        for tile in sorted({t for t, _ in s.rs_cost}):
            cells = []
            for kind in ("rs", "rs-regs"):
                c = s.rs_cost.get((tile, kind), [])
                cells.append(", ".join(f"{x:+.1%}" for x in c) if c else "-")
            tma = s.rs_cost.get((tile, "rs"), [])
            verdict = "-" if not tma else ("yes" if max(tma) <= 0.02 + 1e-9 else "**no**")
            out.append(f"| {s.shape} | {s.dtype} | {tile} | {cells[0]} | {cells[1]} | {verdict} |")
    return out


def bar(shapes: List[Shape], override: Optional[str]) -> List[str]:
    """Issue 56's first bar read off the untuned tile's ratios, a line per
    dtype: at or above cuBLASLt (1.00x) on every shape and at 1.05x on half
    of them, met or not, on the shapes given (the issue judges the whole set
    in sustained windows on 1 x H200: the line says what these rows show)."""
    by: Dict[str, List[Shape]] = defaultdict(list)
    for s in shapes:
        by[s.dtype].append(s)
    out = []
    for dtype, group in sorted(by.items()):
        rs = default_ratios(group, override)
        if not rs:
            continue
        n, above, fast = len(rs), sum(r >= 1.0 for r in rs), sum(r >= 1.05 for r in rs)
        half = (n + 1) // 2
        met = above == n and fast >= half
        out.append(f"- {dtype}, the untuned tile on {n} shapes: {above} at or above 1.00x (the bar: {n}), "
                   f"{fast} at 1.05x (the bar: {half}): {'met' if met else 'not met'}")
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="gemmalone CSVs (rows of several runs may share a file)")
    ap.add_argument("--default", help="the default tile of every shape (else each shape's '# default' line, "
                    "else gpu.DefaultTile's tile when this script was written)")
    ap.add_argument("--dtype", help="only this dtype")
    args = ap.parse_args(argv)
    try:
        got = read(args.csv)
    except MixedCards as e:
        print(f"gemmalone_table: {e}", file=sys.stderr)
        return 2
    shapes = [s for s in got.values() if (s.ratios or s.lt or s.failed) and (not args.dtype or s.dtype == args.dtype)]
    shapes.sort(key=lambda s: (s.dtype, s.mnk))
    if not shapes:
        print("no gemmalone rows in " + ", ".join(args.csv), file=sys.stderr)
        return 1
    print("\n".join(table(shapes, args.default)))
    print()
    print("\n".join(summary(shapes, args.default)))
    bar_lines = bar(shapes, args.default)
    if bar_lines:
        print()
        print("Issue 56's first bar on these rows:")
        print()
        print("\n".join(bar_lines))
    gpus = sorted({s.gpu for s in shapes})
    if len(gpus) > 1:
        print()
        print("Counts above mix cards: " + ", ".join(f"{g} {sum(s.gpu == g for s in shapes)} shapes" for g in gpus) + ".")
    print()
    print("\n".join(rule(shapes, args.default)))
    if any(s.rs_cost for s in shapes):
        print()
        print("The reduce-scatter's epilogue (gemmalone -rs), over the plain tile:")
        print()
        print("\n".join(rs_table(shapes)))
    bad = sorted({f"{s.shape} {s.dtype} {t}: {why}" for s in shapes for t, why in s.failed.items()})
    if bad:
        print()
        print("Tiles without a time: " + "; ".join(bad))
    return 0


if __name__ == "__main__":
    sys.exit(main())
