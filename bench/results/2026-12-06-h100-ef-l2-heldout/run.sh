#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-06 04:22 UTC: ../2026-12-06-h100-ef-l2-heldout.md (the bound holds).
# PLANNED (written 2026-12-06 03:00 UTC, before any run; rename the folder to the day and card it runs on).
# Issue 56: the held-out check of evict-first's L2 bound (kernels/gemm/gpu/defaults_tile.go,
# bBytesOverL2): the untuned 64-row tiles load B evict-first only where B is larger than L2 (50 MiB).
# It was written after the whole bf16 set on 1 x H100 (2026-12-06-h100-bf16-set-retime.md) showed
# 64 x 8,192 x 2,048 and x 1,024 (B 32 and 16 MiB) at 0.68x and 0.78x cuBLASLt with evict-first, 1.17x
# and 1.20x without; every shape evict-first helped had B of 56 MiB or more.
# Here: five shapes no run timed, 64 x 8,192 x K (the untuned tile 64x64:s10:c2:g8:pp at each), B of
# 24, 40 and 48 MiB (K 1,536, 2,560, 3,072: under L2) and 72 and 88 MiB (K 4,608, 5,632: over), the
# tile with and without :ef, two rounds in opposite orders, 0.2 s windows, each tile between
# cuBLASLt's best right before and after it (bench/gemmalone-56.sh).
# Keep rule, fixed before the run: the bound stays if, by the mean of the two rounds' ratios to
# cuBLASLt, the tile without :ef is at least as fast as with it on at least 2 of the 3 shapes under L2,
# and with :ef is behind by no more than 1% on either shape over L2. Else the bound is written down as
# not holding out and the rule before it (no B bound) comes back.
#   bash bench/results/2026-12-06-h100-ef-l2-heldout/build.sh (here: .gpu/efl2/gm.txz); carry [".gpu/efl2"].
set -u
mkdir -p /tmp/gm && tar xJf .gpu/efl2/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/efl2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
T=64x64:s10:c2:g8:pp
OUT=$R/set SET=small SHAPES="64x8192x1536 64x8192x2560 64x8192x3072 64x8192x4608 64x8192x5632" DTYPES=bf16 \
	TILES="$T,$T:ef" SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=150 bash bench/gemmalone-56.sh > $R/set.log 2>&1
echo "gemmalone-56 rc $? at $SECONDS"
grep -h ',fused,' $R/set/*/gemmalone-bf16.csv | awk -F, '{split($8,a," "); k=$1" "$3; s[k]+=a[1]; c[k]++; r[k]=r[k]" "a[1]}
	END {for (k in s) printf "%s %.3f%s\n", k, s[k]/c[k], r[k]}' | sort
tar czf $OUT/efl2.tgz -C /tmp efl2
