#!/bin/bash
# Call H (2026-12-04 evening, call F's build; bench/gemmalone-56.sh with long windows): the 13
# products of issue 56's set of 2,500 GFLOP or more (4096 x 57344/59136 and 11 at 16,384 rows),
# bf16, the untuned tile and 128x256:cl2, each kernel 2 s back to back, one round: their ratios
# where the window no longer moves them (call G).
set -u
mkdir -p /tmp/x && tar xJf .gpu/f.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/h; mkdir -p $R
S=$($BIN/gemmalone -set issue56 -list | awk -Fx '2 * $1 * $2 * $3 >= 2.5e12')
OUT=$R SET=small SHAPES="$S" DTYPES=bf16 LONG_SUSTAIN=2s ROUNDS=1 PER_SHAPE=60 DEADLINE=500 \
	TILES=default,128x256:s4:c2:g8:cl2 bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
echo "bf16 at $SECONDS"; grep -c ',fused,' $R/gemmalone-56/gemmalone-bf16.csv
tar czf $OUT/h.tgz -C /tmp h
