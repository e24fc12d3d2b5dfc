#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-07 06:58-06:59 UTC (DEADLINE=120, 22 s, all 4 shapes): 2026-12-07-h100-ncu-offline-bf16.md.
# The same limit as FP8, milder: our L2 tag requests 65-69% of peak off lines, 44-53% on them.
# PLANNED (written 2026-12-07 03:11 UTC, before any run; rename the folder to the day and card it runs
# on). Issue 56, docs/results-gemm.md's item 11, question 3 of 2026-12-07-h100-ncu-offsector.md: is bf16's
# loss at rows off 128-byte lines the same limit (L2 tag requests) as FP8's at K = 3,696? In 2 s windows
# on 1 x H100 the untuned bf16 tile (128x128:pp) ran 0.923 and 0.917 of cuBLASLt at 256 x 8192 x 3696 and
# x 7392 (rows 7,392 and 14,784 bytes: on 32-byte sectors, 96 and 64 bytes past a line), against 1.00 at
# K = 7,168 and 8,192 (2026-12-06-h100-sustained-bf16.md).
# bench/ncu-gemm.sh, bf16, the untuned tile, two profiled launches a kernel, at 256 x 8192 x K for K of
# 3,584, 3,696, 7,168 and 7,392; about 20 s a shape: DEADLINE=120, timeout 170 s. Read the L2 tag
# requests and sectors from the raw CSVs as the FP8 page did (lts__t_tag_requests, lts__t_sectors).
# No keep rule: a profile; any change it suggests is planned and held out on its own.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"].
set -u
R=/tmp/ncuoffb
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
OUT=$R DTYPE=bf16 SHAPES="256x8192x3696 256x8192x3584 256x8192x7392 256x8192x7168" TILES=default \
	PER_SHAPE=60 DEADLINE=${DEADLINE:-120} bash bench/ncu-gemm.sh > $R/ncu.log 2>&1
echo "ncu-gemm rc $? at $SECONDS"; head -12 $R/ncu-gemm/table.md 2>/dev/null
tar czf $OUT/ncuoffb.tgz -C /tmp ncuoffb
