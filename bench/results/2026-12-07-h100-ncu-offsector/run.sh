#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-07 02:55-02:56 UTC (DEADLINE=140 SCREEN_DEADLINE=100; the profile 20 s, the screen 47 s):
# 2026-12-07-h100-ncu-offsector.md.
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
# profiled launches each; about 20 s a shape: DEADLINE=150.
#  3. (added 01:17, before any run) A screen: does any tile escape the cliff? The same four shapes, e4m3,
#     lean, 0.2 s windows, one round, tiles: the rule's two small-M tiles and their evict-first twins, the clustered
#     cooperative 128x128 and its plain twin, 64x128 and 128x64 ping-pong (SCREEN_DEADLINE=120).
# About 290 s in all; timeout 330 s.
# No keep rule: a profile and a screen; what they find goes into its results page, and any change they
# suggest is planned and held out on its own (the screen's shapes are then not held-out shapes).
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"].
set -u
R=/tmp/ncuoff
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
OUT=$R DTYPE=e4m3 SHAPES="256x8192x3696 256x8192x3584 64x8192x3696 64x8192x3584" TILES=default \
	PER_SHAPE=60 DEADLINE=${DEADLINE:-150} bash bench/ncu-gemm.sh > $R/ncu.log 2>&1
echo "ncu-gemm rc $? at $SECONDS"; head -40 $R/ncu-gemm/table.md 2>/dev/null
OUT=$R/screen SET=small SHAPES="256x8192x3696 256x8192x3584 64x8192x3696 64x8192x3584" DTYPES=e4m3 FP8_REF_ONLY=1 \
	TILES="64x64:s10:c2:g8:pp,64x64:s10:c2:g8:pp:ef,128x128:s6:c2:g4:pp,128x128:s6:c2:g4:pp:ef,128x128:s6:c2:g4:cl2,64x128:s8:c2:g8:pp,128x64:s8:c2:g8:pp,128x128:s6:c2:g4" \
	SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=45 DEADLINE=${SCREEN_DEADLINE:-120} bash bench/gemmalone-56.sh > $R/screen.log 2>&1
echo "screen rc $? at $SECONDS"
grep -h ',fused,' $R/screen/*/gemmalone-e4m3.csv | awk -F, '{split($8,a," "); print $1, $3, a[1], $7}' | sort
tar czf $OUT/ncuoff.tgz -C /tmp ncuoff
