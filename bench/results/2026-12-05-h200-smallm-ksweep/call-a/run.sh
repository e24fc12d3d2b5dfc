#!/bin/bash
# Call A (2026-12-05), main's gemmalone (.gpu/gemm/a.txz: make gemmalone BIN=/tmp/ga/bin && tar cJf
# .gpu/gemm/a.txz -C /tmp/ga bin; carry [".gpu/gemm"]). Where the 64-row tile's time goes against
# cuBLASLt's, by a sweep over K at fixed M x N: a time that is a + b K per kernel tells a fixed cost
# (launch, prologue, pipeline fill, epilogue: a) from the streaming rate (b). At 64 x 14336 x 4096
# (bf16) ours ran 34.2 µs at 73% of DRAM peak, cuBLASLt 31.5 at 79% (ncu); sharing A by multicast did
# not help (2026-12-05-h200-cluster-n.md). Shapes fixed before the run: 64 x 14336 x K and 64 x 8192 x K,
# K = 1024 .. 32768 (x2), bf16 and FP8 row scales, 64x128:s8:pp and 64x64:s10:pp against cuBLASLt's
# best, 0.2 s windows, two rounds (tiles reversed in the second). Also 64x128:s8:pp in 2 k-slices
# (split-K, which the rule takes only where the tiles fill half the SMs or less): at 112 tiles it
# puts 132 CTAs to streaming B instead of 112, which may matter more than the waves where DRAM decides.
set -u
mkdir -p /tmp/a && tar xJf .gpu/gemm/a.txz -C /tmp/a
export BIN=/tmp/a/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ks; mkdir -p $R
T=64x128:s8:c2:g8:pp,64x64:s10:c2:g8:pp,64x128:s8:c2:g8:pp:sk2
S=""; for n in 14336 8192; do for k in 1024 2048 4096 8192 16384 32768; do S="$S 64x${n}x$k"; done; done
for d in bf16 e4m3_row; do
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d TILES=$T SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=200 \
		bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"
	grep -v '^#' $R/$d/gemmalone-56/gemmalone-$d.csv | awk -F, '{k=$1" "$3; s[k]+=$6; n[k]++} END{for(k in s) printf "%s %.2f\n", k, s[k]/n[k]}' | sort -t' ' -k1,1 -k2,2
done
tar czf $OUT/ks.tgz -C /tmp ks
