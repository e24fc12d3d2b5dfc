#!/bin/bash
# Written 2026-12-05 before the run, after bench/results/2026-12-05-h200-pp-cluster.md; run as call A of
# 2026-12-05-h200-pp-cluster-heldout.md. The held-out check of a rule that call's two wide shapes suggest: the
# ping-pong tile in clusters of two (B multicast, branch pp-cl2) where the untuned tile is the ping-pong
# one and N is wide (N >= 14,336) at short loops (K <= 2,048). Six shapes, fixed here before any run
# (tensor-parallel projections: N 14,336 / 28,672 / 57,344, K 1,024 / 2,048, M 2,048-16,384), tensor and
# row FP8 scales and bf16, 0.2 s windows, two rounds (tiles reversed in the second). The rule would be
# kept only if pp:cl2 is ahead of pp on at least 5 of the 6 in each FP8 mode, averaged over the rounds,
# and behind by no more than 1% on any. Build the branch here:
#   git worktree add /tmp/wt-pp pp-cl2 && ln -s "$PWD/.cuda" /tmp/wt-pp/.cuda && (cd /tmp/wt-pp &&
#   CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o /tmp/gp/bin/gemmalone ./bench/gemmalone) &&
#   tar cJf .gpu/gemm/pp.txz -C /tmp/gp bin
# and run with carry [".gpu/gemm"].
set -u
mkdir -p /tmp/x && tar xJf .gpu/gemm/pp.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/pph; mkdir -p $R
T=128x128:s6:c2:g4:pp,128x128:s6:c2:g4:pp:cl2
S="2048x14336x1024 8192x14336x2048 8192x28672x1024 2048x57344x2048 8192x57344x1024 16384x28672x2048"
for d in e4m3_row e4m3 bf16; do
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d TILES=$T SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=150 \
		bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"
	tail -n 20 $R/$d.log | grep '^| [0-9]' | cut -c1-200
done
tar czf $OUT/pph.tgz -C /tmp pph
