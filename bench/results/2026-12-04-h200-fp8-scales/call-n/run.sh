#!/bin/bash
# Call N (2026-12-04 night, main at f84ee97: both scale-load changes): FP8 row scales at K 1,024
# and 2,048, where the untuned rule takes the ping-pong tile (shortLoopKBlocks), against 128x256
# with and without clusters: does the short-loop pick still hold for row scales now? Four shapes
# of issue 56's set and three outside it, two rounds of 0.2 s (bench/gemmalone-56.sh).
set -u
mkdir -p /tmp/x && tar xJf .gpu/n.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/n; mkdir -p $R
S="4096x8192x1024 16384x8192x1024 4096x8192x2048 16384x8192x2048 2048x28672x1024 8192x14336x1024 12288x5120x1024"
OUT=$R SET=small SHAPES="$S" DTYPES=e4m3_row SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=170 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8 bash bench/gemmalone-56.sh > $R/row.log 2>&1
echo "row at $SECONDS"; grep '^| [0-9]' $R/row.log | cut -c1-200
tar czf $OUT/n.tgz -C /tmp n
