#!/bin/bash
# PLANNED (written 2026-12-06 06:30 UTC, before any run; rename the folder to the day and card it runs
# on). Issue 56, profile before guessing, on 1 x H100 (any card runs it; the questions are the H100's):
#  1. Why the ping-pong 128x128 tile keeps 0.896 of 128x256's rate on an H100 against 0.965 on an H200
#     (2026-12-06-h100-tile-factors.md): its tensor-pipe share and top stalls beside 128x224 and 128x256
#     at two many-wave shapes of that run (16384 x 8192 x 8192: 0.873 of 128x256; 16384 x 2560 x 8192:
#     0.841).
#  2. What holds every tile below cuBLASLt at 1,024 rows (2026-12-06-h100-wide-pick.md: 0.82-0.97):
#     1024 x 29568 x 14336 (8 and 14 full waves for 128x224 and 128x128) against cuBLASLt's kernel.
#  3. Docs/results-gemm.md's item 8, the 256-row ridge: 256 x 8192 x 8192 with the rule's tile.
# bench/ncu-gemm.sh on those four shapes, tiles 128x128:s6:c2:g4:pp, 128x224:s5:c2:g16 and
# 128x256:s4:c2:g8 (the rule's own at 256 rows is 128x128:pp), two profiled launches each.
# No keep rule: a profile; what it says goes into the results page, any change it suggests is planned
# and held out on its own.
#   Bundle: bash bench/results/2026-12-06-h100-fp8-set-retime/build.sh (.gpu/set/gm.txz); carry [".gpu/set"].
set -u
mkdir -p /tmp/gm && tar xJf .gpu/set/gm.txz -C /tmp/gm
export SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ncupp; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
BIN=/tmp/gm/bin OUT=$R SHAPES="16384x8192x8192 16384x2560x8192 1024x29568x14336 256x8192x8192" \
	TILES="128x128:s6:c2:g4:pp,128x224:s5:c2:g16,128x256:s4:c2:g8" PER_SHAPE=100 DEADLINE=${DEADLINE:-420} \
	bash bench/ncu-gemm.sh > $R/ncu.log 2>&1
echo "ncu-gemm rc $? at $SECONDS"; cat $R/ncu-gemm/table.md 2>/dev/null | head -40
tar czf $OUT/ncupp.tgz -C /tmp ncupp
