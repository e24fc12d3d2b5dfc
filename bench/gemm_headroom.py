#!/usr/bin/env python3
"""bench/gemm_headroom.py CSV...: how much faster than cuBLASLt a GEMM could
be on each shape of bin/gemmalone's CSVs, by the shape's roofline at
ceilings the runs themselves reached.

Issue 56 asks the fused GEMM to run at least 1.05x cuBLASLt on half of its
set. Where cuBLASLt already runs at the hardware's practical limit, no
kernel can; this says where that is. Per dtype the ceilings are the most
TFLOP/s and the most TB/s of least bytes (A and B once, C once, and FP8's
row scales) that any timed kernel reached on any shape in the CSVs,
cuBLASLt's algorithms and the tiles alike: rates the GPU was seen to
sustain under the same power cap and timing, not datasheet peaks (TB/s
only on products too large to run from L2 back to back: L2_BYTES). A
shape's floor is the longer of its multiply-adds at the TFLOP/s ceiling
and its least bytes at the TB/s ceiling; its headroom is cuBLASLt's best
time over that floor: the ratio to cuBLASLt a kernel running the shape at
both ceilings would show. It is an upper bound: the floor leaves out wave
quantization, pipeline fill and the products near the ridge, which are
bound by both at once. Beside it, the share of the floor the default tile
(else the best tile) reached: how far ours is from it.

Prints, per dtype and row count M, the shapes, the median headroom, how
many have 1.05 or more (the bar's reach), and the median share ours
reached; --shapes adds a row per shape. Standard library only; reads the
CSVs with bench/gemmalone_table.py's reader.
"""

import argparse
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gemmalone_table import MixedCards, Shape, read  # noqa: E402

BAR = 1.05
# The L2 of an H100/H200, bytes: a product whose least bytes fit twice over
# may run from L2 when timed back to back, so only larger ones set the TB/s
# ceiling (on 2026-12-04 a 32 MiB product "read" 4.53 TB/s that way, the
# largest ones 4.2).
L2_BYTES = 50 * 2**20


def least_bytes(s: Shape) -> float:
    """gemmalone_table's least bytes, with FP8's row scales where s has them."""
    return s.least_bytes(row_scales=s.dtype == "e4m3_row")


def times(s: Shape) -> List[float]:
    """Every kernel's time on s, µs: cuBLASLt's algorithms and each tile's fastest."""
    return list(s.lt.values()) + [min(us) for us in s.us.values() if us]


def ceilings(shapes: List[Shape]) -> Tuple[float, float]:
    """The most TFLOP/s any kernel reached on any of shapes, and the most
    TB/s on those too large to stay in L2 (2 x L2_BYTES or more)."""
    tf = bw = 0.0
    for s in shapes:
        m, n, k = s.mnk
        for us in times(s):
            tf = max(tf, 2.0 * m * n * k / us / 1e6)
            if least_bytes(s) >= 2 * L2_BYTES:
                bw = max(bw, least_bytes(s) / us / 1e6)
    return tf, bw


class Row:
    """One shape's floor against cuBLASLt's time and ours."""

    def __init__(self, s: Shape, lt_us: float, tf: float, bw: float):
        m, n, k = s.mnk
        self.shape, self.m, self.lt_us = s.shape, m, lt_us
        t_math, t_mem = 2.0 * m * n * k / (tf * 1e6), least_bytes(s) / (bw * 1e6)
        self.floor_us = max(t_math, t_mem)
        self.bound = "memory" if t_mem >= t_math else "tensor"
        self.in_l2 = least_bytes(s) < 2 * L2_BYTES
        self.headroom = lt_us / self.floor_us
        best = s.best()
        self.tile = s.default if s.default in s.us else best[0] if best else None
        self.ours_share = self.floor_us / min(s.us[self.tile]) if self.tile else None


def report(shapes: Dict[Tuple[str, str], Shape], per_shape: bool) -> List[str]:
    out: List[str] = []
    by_dtype: Dict[str, List[Shape]] = defaultdict(list)
    for s in shapes.values():
        by_dtype[s.dtype].append(s)
    for dtype in sorted(by_dtype):
        group = by_dtype[dtype]
        tf, bw = ceilings(group)
        rows = [Row(s, min(s.lt.values()), tf, bw) for s in sorted(group, key=lambda s: s.mnk) if s.lt]
        if not rows:
            continue
        reach = sum(r.headroom >= BAR for r in rows)
        out += [f"## {dtype}: {len(rows)} shapes; ceilings {tf:.0f} TFLOP/s and {bw:.2f} TB/s (the most any kernel reached; "
                f"TB/s on products of {2 * L2_BYTES / 2**20:.0f} MiB or more)",
                "",
                f"A kernel at both ceilings would run at least {BAR:.2f}x cuBLASLt on {reach} of {len(rows)} shapes "
                f"(median headroom {statistics.median(r.headroom for r in rows):.3f}).",
                "",
                "| M | shapes | memory-bound (of them under 2x L2) | cuBLASLt's headroom, median (min-max) | at 1.05 or more | "
                "ours: share of the floor, median |",
                "|---|---|---|---|---|---|"]
        by_m: Dict[int, List[Row]] = defaultdict(list)
        for r in rows:
            by_m[r.m].append(r)
        for m in sorted(by_m):
            rs = by_m[m]
            hs = [r.headroom for r in rs]
            ours = [r.ours_share for r in rs if r.ours_share is not None]
            share = f"{statistics.median(ours):.0%}" if ours else "-"
            mem = [r for r in rs if r.bound == "memory"]
            out.append(f"| {m} | {len(rs)} | {len(mem)} ({sum(r.in_l2 for r in mem)}) | {statistics.median(hs):.3f} "
                       f"({min(hs):.3f}-{max(hs):.3f}) | {sum(h >= BAR for h in hs)} | {share} |")
        if per_shape:
            out += ["", "| shape | bound | floor µs | cuBLASLt µs | headroom | tile | ours: share of the floor |",
                    "|---|---|---|---|---|---|---|"]
            for r in rows:
                share = f"{r.ours_share:.0%}" if r.ours_share is not None else "-"
                bound = r.bound + (", under 2x L2" if r.in_l2 and r.bound == "memory" else "")
                out.append(f"| {r.shape} | {bound} | {r.floor_us:.1f} | {r.lt_us:.1f} | {r.headroom:.3f} | "
                           f"{r.tile or '-'} | {share} |")
        out.append("")
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="bin/gemmalone CSVs (bench/gemmalone-56.sh's gemmalone-DTYPE.csv)")
    ap.add_argument("--shapes", action="store_true", help="also a row per shape")
    args = ap.parse_args(argv)
    for p in args.csv:
        if not Path(p).is_file():
            print(f"gemm_headroom.py: {p}: no such file", file=sys.stderr)
            return 2
    try:
        shapes = read(args.csv)
    except MixedCards as e:
        print(f"gemm_headroom.py: {e}", file=sys.stderr)
        return 2
    print("\n".join(report(shapes, args.shapes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
