#!/bin/bash
# Call E (2026-12-04 evening, branch streamk-cl2 at 90ae81d): (1) stream-K in clusters of two checked
# against float64 on ragged shapes where its walk shares tiles out (M, N off the tile, K off the
# k-block); (2) timed against the unclustered stream-K tile and the clustered plain tile on the set's
# weakest 16,384-row shapes, 4096x57344x8192 and four held-out shapes, two rounds; (3) FP8 row scales
# at K = 1,024 (the short-loop ping-pong pick) against 128x256 tiles, two rounds; (4) ncu of
# 4096x57344x8192, cuBLASLt's first kernel against 128x256:cl2.
set -u
mkdir -p /tmp/x && tar xJf .gpu/e.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/e; mkdir -p $R
OUT=$R/check SET=small SHAPES="3300x12000x6152 2900x8800x8200 3001x5408x7176 3998x4104x7176" DTYPES=bf16 SUSTAIN=0.05s ROUNDS=1 PER_SHAPE=30 DEADLINE=70 \
	TILES=default,128x256:s4:c2:g8:cl2:st,256x160:s4:c2:g8:cl2:st,128x256:s4:c2:g8:st \
	bash bench/gemmalone-56.sh > $R/check.log 2>&1
echo "check at $SECONDS"; grep -c ',fused,' $R/check/gemmalone-56/gemmalone-bf16.csv; grep -i 'fail\|error\|bad' $R/check/gemmalone-56/gemmalone-bf16.err | head -5
S="16384x5120x8192 16384x14784x8192 16384x8192x14784 16384x14336x8192 4096x57344x8192 12288x6144x8192 8192x13824x6144 10240x8192x8192 16384x10240x5120"
OUT=$R/bf16 SET=small SHAPES="$S" DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=220 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:st,128x256:s4:c2:g8:cl2:st,256x160:s4:c2:g8:cl2,256x160:s4:c2:g8:cl2:st \
	bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
echo "bf16 at $SECONDS"; tail -n 2 $R/bf16.log | cut -c1-200
F="16384x8192x1024 4096x8192x1024 8192x14336x1024 12288x5120x1024 2048x28672x1024 256x8192x3696"
OUT=$R/e4m3_row SET=small SHAPES="$F" DTYPES=e4m3_row SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=130 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8,128x128:s6:c2:g4:pp,128x224:s5:c2:g16,128x128:s6:c2:g8 \
	bash bench/gemmalone-56.sh > $R/e4m3_row.log 2>&1
echo "e4m3_row at $SECONDS"; tail -n 2 $R/e4m3_row.log | cut -c1-200
if [ $SECONDS -lt 450 ]; then
	OUT=$R SHAPE=4096x57344x8192 TILES=128x256:s4:c2:g8:cl2 timeout $((560 - SECONDS)) bash bench/experiments/ncu-gemm.sh > $R/ncu.log 2>&1
	echo "ncu at $SECONDS"; tail -n 4 $R/ncu.log
fi
tar czf $OUT/e.tgz -C /tmp e
