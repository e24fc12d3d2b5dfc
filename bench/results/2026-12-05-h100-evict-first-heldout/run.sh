#!/bin/bash
# Written 2026-12-05 (shapes and keep rule before the run); ran 2026-12-05 05:15 UTC on 1 × H100 SXM (the call named nvidia-h200 and got an H100). The
# evict-first B loads (tile option ":ef", branch tma-hints at 5d10442 or later), a lead from
# bench/results/2026-12-05-h200-smallm-ksweep.md (call B: +2.4% mean, faster on 16 of 20 cells at 64-128
# rows, no keep rule fixed before it). Shapes fixed here, none timed with it before: tensor-parallel
# projections at 64, 128 and 256 rows, N 3,584-57,344, K 3,584-28,672; bf16 and FP8 row scales; the two
# 64-row tiles the small-M rules pick (64x128:s8:pp, 64x64:s10:pp), each with and without ":ef", plus the
# untuned tile for reference; 0.2 s windows, two rounds (tiles reversed in the second).
# Keep rule, fixed before the run: over the 32 cells (8 shapes x 2 dtypes x 2 tiles), ":ef" ahead of the
# same tile without it, averaged over the rounds, on at least 24, behind by no more than 2% on any, and
# ahead by at least 1% on average. If kept: the 64-row tiles take ":ef" in the small-M rules
# (kernels/gemm/gpu/defaults_tile.go) and in the searched list; else the branch stays unmerged.
# Build the branch here:
#   git worktree add /tmp/wt-th tma-hints && ln -s "$PWD/.cuda" /tmp/wt-th/.cuda && (cd /tmp/wt-th &&
#   CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o /tmp/gt/bin/gemmalone ./bench/gemmalone) &&
#   mkdir -p .gpu/gemm && tar cJf .gpu/gemm/th.txz -C /tmp/gt bin
# and run with carry [".gpu/gemm"].
set -u
mkdir -p /tmp/t && tar xJf .gpu/gemm/th.txz -C /tmp/t
export BIN=/tmp/t/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ef; mkdir -p $R
T=default,64x128:s8:c2:g8:pp,64x128:s8:c2:g8:pp:ef,64x64:s10:c2:g8:pp,64x64:s10:c2:g8:pp:ef
S="64x3584x8192 64x10240x8192 64x57344x8192 64x8192x3584 128x8192x28672 128x5120x8192 256x7168x8192 256x14336x4096"
for d in bf16 e4m3_row; do
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d TILES=$T SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=250 \
		bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"
	grep ',fused,' $R/$d/gemmalone-56/gemmalone-$d.csv | awk -F, '{k=$1" "$3; s[k]+=$8; c[k]++} END{for(k in s) printf "%s %.3f\n", k, s[k]/c[k]}' | sort
done
tar czf $OUT/ef.tgz -C /tmp ef
