#!/bin/bash
# Call A (planned 2026-12-04 on branch fp8-streamk, run 2026-12-05 with main at 33ca574): (1) the FP8 row-scale ping-pong tile re-timed after
# 943a437 (its early scale loads now only where no all-gather's rows are waited for) at the four
# short-loop shapes of calls I and M, against 128x256:cl2, 0.2 s, one round; (2) FP8's stream-K
# tile (128x256:s4:c2:g8:cl2:st) against the untuned tile where streamK, weighing FP8's 128-element
# k-blocks, would take it: two shapes of issue 56's set (16384x8192x14336/14784) and five outside it
# (6,144-12,288 rows), tensor and row scales, products of 2,500 GFLOP or more in 2 s windows, one
# round. Call B runs this script again with CALL=b TILES_ORDER=128x256:s4:c2:g8:cl2:st,default
# PP_ORDER=128x256:s4:c2:g8:cl2,default: the second round, tiles in the other order.
set -u
mkdir -p /tmp/x && tar xJf .gpu/a.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
C=${CALL:-a} R=/tmp/${CALL:-a}; mkdir -p $R
OUT=$R/pp SET=small SHAPES="16384x8192x1024 2048x28672x1024 8192x8192x2048 4096x8192x1024" DTYPES=e4m3_row \
	TILES=${PP_ORDER:-default,128x256:s4:c2:g8:cl2} SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=40 DEADLINE=90 bash bench/gemmalone-56.sh > $R/pp.log 2>&1
echo "pp at $SECONDS"
S="16384x8192x14336 8192x8192x28672 12288x7168x14336 6144x14336x14336 8192x10240x14336 6144x7168x14336 16384x8192x14784"
for d in e4m3_row e4m3; do
	dl=$(( (545 - SECONDS) / 2 - 20 )); [ $d = e4m3 ] && dl=$((545 - SECONDS - 30))
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d LONG_SUSTAIN=2s SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=60 DEADLINE=$dl \
		TILES=${TILES_ORDER:-default,128x256:s4:c2:g8:cl2:st} bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"; grep -c ',fused,' $R/$d/gemmalone-56/gemmalone-$d.csv
done
for d in pp e4m3_row e4m3; do tail -n 30 $R/$d.log | grep '^| [0-9]' | cut -c1-220; done
tar czf $OUT/$C.tgz -C /tmp $C
