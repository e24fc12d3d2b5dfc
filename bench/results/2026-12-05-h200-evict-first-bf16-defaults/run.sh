#!/bin/bash
# Written 2026-12-05 and committed (e5e3f6b, 05:28 UTC) before the run; ran 2026-12-05 05:29 UTC on 1 × H200 (132 SMs, driver 580).
# A second, narrower held-out check of evict-first B loads (":ef", branch tma-hints 5d10442), after the
# first failed its rule (2026-12-05-h100-evict-first-heldout.md: 23 of 32 cells ahead, five behind by
# more than 2%, +3.2% mean; in bf16 13 of 16 ahead, +4.0%). The hypothesis formed from that call, and
# judged here on shapes none of the three earlier calls timed: in bf16, where the untuned tile at 64-256
# rows is a 64-row ping-pong tile (64x64:s10, 64x128:s8, 64x224:s6; gpu.DefaultTile, no split), that
# tile with ":ef" is faster. FP8 is left out: its 64-row tiles are 1.3-2.9x cuBLASLt FP8 there already,
# and the first check split 10 of 16 there.
# Shapes (tensor-parallel projections of Llama-3 70B and Qwen-2.5 72B, decode batch sizes), each with the
# tile gpu.DefaultTile picks in bf16 (computed here before the run):
#   64x7392x8192 64x8192x7392 64x8192x14336 -> 64x64:s10:c2:g8:pp
#   128x8192x3696 64x14784x8192 128x7168x8192 96x8192x7168 -> 64x128:s8:c2:g8:pp
#   128x14784x8192 192x8192x8192 64x28672x8192 -> 64x224:s6:c2:g8:pp
# Every shape times all three tiles with and without ":ef" (the other tiles for information only),
# 0.2 s windows, three rounds (tile order reversed every other round).
# Keep rule, fixed before the run: over the 10 cells (each shape's untuned tile), ":ef" ahead of the same
# tile without it (the mean of the rounds' ratios to cuBLASLt) on at least 8, behind by no more than 2%
# on any, ahead by at least 1% on average. If kept: tma-hints is merged, and gpu.DefaultTile's bf16 and
# f16 picks that are 64-row ping-pong tiles take ":ef" (the searched tiles unchanged). Else nothing.
# Build: .gpu/gemm/th.txz as in 2026-12-05-h100-evict-first-heldout/run.sh; carry [".gpu/gemm"].
set -u
mkdir -p /tmp/t && tar xJf .gpu/gemm/th.txz -C /tmp/t
export BIN=/tmp/t/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ef2; mkdir -p $R
T=64x64:s10:c2:g8:pp,64x64:s10:c2:g8:pp:ef,64x128:s8:c2:g8:pp,64x128:s8:c2:g8:pp:ef,64x224:s6:c2:g8:pp,64x224:s6:c2:g8:pp:ef
S="64x7392x8192 64x8192x7392 64x8192x14336 128x8192x3696 64x14784x8192 128x7168x8192 96x8192x7168 128x14784x8192 192x8192x8192 64x28672x8192"
OUT=$R/bf16 SET=small SHAPES="$S" DTYPES=bf16 TILES=$T SUSTAIN=0.2s ROUNDS=3 PER_SHAPE=60 DEADLINE=420 \
	bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
echo "bf16 at $SECONDS"
grep ',fused,' $R/bf16/gemmalone-56/gemmalone-bf16.csv | awk -F, '{split($8,a," "); k=$1" "$3; s[k]+=a[1]; c[k]++; r[k]=r[k]" "a[1]} END{for(k in s) printf "%s %.3f%s\n", k, s[k]/c[k], r[k]}' | sort
tar czf $OUT/ef2.tgz -C /tmp ef2
