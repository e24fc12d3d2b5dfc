#!/bin/bash
# Written 2026-12-05 before the run; ran 2026-12-05 05:19 UTC on 1 × H100 SXM (the call named nvidia-h200 and got an H100). Where FP8's stream-K rule loses (docs/results-gemm.md, "Next, for a GPU" item 2): with row scales it lost 2.4% at 8192 x
# 10240 x 14336 and 3.6% at 16384 x 5120 x 14336 (1,280 cluster tiles, 26 of 66 in the last wave) but
# won at K = 28,672 on the same M x N (bench/results/2026-12-05-h200-fp8-streamk.md). Is the loss a
# cost that grows with K (the fix-up's partials are a fixed size, so it should not), or one the shorter
# loop cannot hide? Main's gemmalone (.gpu/gemm/a.txz: make gemmalone BIN=/tmp/ga/bin && tar cJf
# .gpu/gemm/a.txz -C /tmp/ga bin), carry [".gpu/gemm"]. The stream-K tile (128x256:s4:c2:g8:cl2:st)
# against the same tile without it at those two M x N and K = 7,168, 10,240, 14,336, 20,480, 28,672,
# FP8 row scales, 1 s windows (LONG_GFLOP=500), two rounds (tiles reversed in the second); then ncu of
# both at 16384 x 5120 x 14336 (SM busy, the time per CTA's last unit). Nothing is changed by this call:
# it says whether the rule's gate (StreamKMinGain, 64 k-blocks a walker to win back) should weigh K.
set -u
mkdir -p /tmp/a && tar xJf .gpu/gemm/a.txz -C /tmp/a
export BIN=/tmp/a/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/skk; mkdir -p $R
T=128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:cl2:st
S=""; for mn in 8192x10240 16384x5120; do for k in 7168 10240 14336 20480 28672; do S="$S ${mn}x$k"; done; done
OUT=$R/row SET=small SHAPES="$S" DTYPES=e4m3_row TILES=$T SUSTAIN=0.2s LONG_SUSTAIN=1s LONG_GFLOP=500 ROUNDS=2 \
	PER_SHAPE=60 DEADLINE=330 bash bench/gemmalone-56.sh > $R/row.log 2>&1
echo "row at $SECONDS"
grep ',fused,' $R/row/gemmalone-56/gemmalone-e4m3_row.csv | awk -F, '{k=$1" "$3; s[k]+=$11; c[k]++} END{for(k in s) printf "%s %.3f\n", k, s[k]/c[k]}' | sort
for t in 128x256:s4:c2:g8:cl2 128x256:s4:c2:g8:cl2:st; do
	OUT=$R SHAPE=16384x5120x14336 TILES=$t DTYPE=e4m3_row NO_CUBLAS=1 timeout 80 bash bench/experiments/ncu-gemm.sh > $R/ncu-$t.log 2>&1
	echo "ncu $t at $SECONDS"
done
tar czf $OUT/skk.tgz -C /tmp skk
