#!/bin/bash
# Call C (2026-12-05, main at 8d4844e, .gpu/a.txz rebuilt from it: "default" is now the merged rule's
# pick, the stream-K tile): a held-out check of FP8's stream-K rule with row scales, the scale mode
# that lost at 8192 x 10240 x 14336, on four shapes where the rule takes it, chosen before any run
# from a grid by their last waves (2-46 of 66 cluster slots, `DefaultTileFor`): 8192x10240x28672 (the
# loser's M x N, twice its K; 26/66), 16384x5120x14336 (26/66), 4096x10240x28672 (46/66),
# 12288x8192x14336 (18/66). Against 128x256:s4:c2:g8:cl2 (the tile before the rule), 1 s windows, two
# rounds with the tiles in the other order in the second.
set -u
mkdir -p /tmp/x && tar xJf .gpu/a.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/c; mkdir -p $R
S="8192x10240x28672 16384x5120x14336 4096x10240x28672 12288x8192x14336"
n=0
for order in default,128x256:s4:c2:g8:cl2 128x256:s4:c2:g8:cl2,default; do
	n=$((n + 1))
	OUT=$R/r$n SET=small SHAPES="$S" DTYPES=e4m3_row LONG_SUSTAIN=1s SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=40 DEADLINE=110 \
		TILES=$order bash bench/gemmalone-56.sh > $R/r$n.log 2>&1
	echo "round $n at $SECONDS"
	tail -n 12 $R/r$n.log | grep '^| [0-9]' | cut -c1-220
done
tar czf $OUT/c.tgz -C /tmp c
