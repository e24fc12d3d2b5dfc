#!/bin/bash
# Written 2026-12-05 06:25 UTC before any run; ran 2026-12-05 15:07 UTC on 1 x H200 (nvidia-h200): ef4.tgz, ../2026-12-05-h200-evict-first-fp8.md.
# Evict-first B (":ef") in FP8 at small M. bf16's untuned 64-row ping-pong tiles take it since
# 2026-12-05-h200-evict-first-bf16-defaults (10 of 10 faster on 1 x H200); FP8 was left out because the
# first check, on an H100, split 10 of 16 row-scale cells (2026-12-05-h100-evict-first-heldout.md), while
# the H200 lead (2026-12-05-h200-smallm-ksweep.md, call B) had FP8 row ahead on 7 of 10. This asks it on
# an H200 with the tile the rule picks. Main's gemmalone (.gpu/gemm/a.txz, rebuilt at 4ce7c8d on 2026-12-05 06:39, after the merge:
# make gemmalone BIN=/tmp/ga/bin && tar cJf .gpu/gemm/a.txz -C /tmp/ga bin), carry [".gpu/gemm"].
# Shapes never timed with evict-first (gpu.DefaultTile's FP8 pick, computed before the run):
#   64x7680x8192 64x6912x8192 -> 64x64:s10:c2:g8:pp
#   64x9216x8192 64x11008x4096 128x8192x5120 -> 64x128:s8:c2:g8:pp
#   128x10240x8192 96x14336x4096 192x7168x8192 -> 64x224:s6:c2:g8:pp
# Both scale modes (e4m3 tensor scales, e4m3_row), all three tiles with and without ":ef" (the other
# tiles for information), 0.2 s windows, three rounds (tiles reversed every other round).
# Keep rule, fixed before the run: over the 16 cells (8 shapes x 2 scale modes, each shape's untuned
# tile), ":ef" ahead (the mean of the rounds' ratios to cuBLASLt FP8's best) on at least 13, behind by no
# more than 2% on any, ahead by at least 1% on average. If kept: gpu.evictFirst64 drops its "not FP8"
# condition. Else nothing.
set -u
mkdir -p /tmp/a && tar xJf .gpu/gemm/a.txz -C /tmp/a
export BIN=/tmp/a/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ef4; mkdir -p $R
T=64x64:s10:c2:g8:pp,64x64:s10:c2:g8:pp:ef,64x128:s8:c2:g8:pp,64x128:s8:c2:g8:pp:ef,64x224:s6:c2:g8:pp,64x224:s6:c2:g8:pp:ef
S="64x7680x8192 64x6912x8192 64x9216x8192 64x11008x4096 128x8192x5120 128x10240x8192 96x14336x4096 192x7168x8192"
for d in e4m3 e4m3_row; do
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d TILES=$T SUSTAIN=0.2s ROUNDS=3 PER_SHAPE=60 DEADLINE=260 \
		bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"
	grep ',fused,' $R/$d/gemmalone-56/gemmalone-$d.csv | awk -F, '{k=$1" "$3; s[k]+=$11; c[k]++; r[k]=r[k]" "$11} END{for(k in s) printf "%s %.3f%s\n", k, s[k]/c[k], r[k]}' | sort
done
tar czf $OUT/ef4.tgz -C /tmp ef4
