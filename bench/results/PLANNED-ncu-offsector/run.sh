#!/bin/bash
# PLANNED (written 2026-12-07 00:54 UTC, before any run; rename the folder to the day and card it runs
# on). Issue 56, profile before guessing: why FP8 loses most where K starts each row off a 32-byte
# sector at few rows. In 2 s windows on 1 x H100 (2026-12-06-h100-sustained-e4m3.md and -row.md), the
# untuned tile at 256 x 8192 x 3696 runs at 0.705 of cuBLASLt FP8 (tensor scales; 0.834 with row
# scales) and 64 x 8192 x 3696 at 0.792 (0.981), while 256 x 8192 x 3584 (rows on sectors, 3% less
# work) runs at 0.988 and from 1,024 rows K = 3,696 runs at 1.15-1.18 (row scales). The questions:
#  1. Is it ours or cuBLASLt's that moves between K = 3,584 and 3,696 (time per flop of each)?
#  2. What our tile's L2 sectors, L2 and DRAM throughput, tensor pipe and stalls say at each K, beside
#     cuBLASLt's kernel, and whether cuBLASLt changes kernel (its name in the table) at 3,696.
# bench/ncu-gemm.sh, e4m3 (tensor scales, cuBLASLt FP8 alone), the untuned tile of each shape, two
# profiled launches each; about 20 s a shape: DEADLINE=150, timeout 200 s.
# No keep rule: a profile; what it finds goes into its results page, and any change it suggests is
# planned and held out on its own.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"].
set -u
R=/tmp/ncuoff
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
OUT=$R DTYPE=e4m3 SHAPES="256x8192x3696 256x8192x3584 64x8192x3696 64x8192x3584" TILES=default \
	PER_SHAPE=60 DEADLINE=${DEADLINE:-150} bash bench/ncu-gemm.sh > $R/ncu.log 2>&1
echo "ncu-gemm rc $? at $SECONDS"; head -40 $R/ncu-gemm/table.md 2>/dev/null
tar czf $OUT/ncuoff.tgz -C /tmp ncuoff
