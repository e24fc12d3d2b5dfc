#!/bin/bash
# Written 2026-12-06 08:50 UTC (as PLANNED-fp8-method/); ran 09:06-09:23 on 1 x H100 (../2026-12-06-h100-fp8-method.md); run after check.sh beside this, whatever its verdict.
# Issue 56's FP8 sets, lean (cuBLASLt FP8 alone around each tile),
# two rounds a shape (tiles reversed in the second; the table averages them), 0.2 s windows, the untuned
# tile. Row scales, the whole set, fit one call (call H of 2026-12-06 took 202 s a round on 1 x H100);
# tensor scales take two calls: SHARD=1/2 and SHARD=2/2. If check.sh's verdict keeps both modes, the count
# is reported beside the default mode's and is not the bar's.
#   Bundle: bash bench/results/2026-12-06-h100-fp8-set-retime/build.sh (.gpu/set/gm.txz); carry [".gpu/set"].
set -u
DT=${DT:-e4m3_row}
SHARD=${SHARD:-1/1}
mkdir -p /tmp/gm && tar xJf .gpu/set/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
tag=$DT-$(echo "$SHARD" | tr / of)
R=/tmp/fp8s-$tag; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
SET=full SHARD=$SHARD DTYPES=$DT TILES=default SUSTAIN=0.2s LONG_SUSTAIN=0.2s PER_SHAPE=30 ROUNDS=2 \
	DEADLINE=${DEADLINE:-460} FP8_REF_ONLY=1 OUT=$R/set bash bench/gemmalone-56.sh > $R/set.log 2>&1
echo "gemmalone-56 $DT $SHARD rc $? at $SECONDS"; grep -E 'deadline|rc ' $R/set.log | head -5
tail -30 $R/set/gemmalone-56-*/table.md 2>/dev/null
tar czf $OUT/fp8s-$tag.tgz -C /tmp fp8s-$tag
