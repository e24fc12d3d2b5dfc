#!/bin/bash
# Call M (2026-12-04 night): branch fp8-scales-at-turn (15e486c, build B: FP8 ping-pong tiles
# load the epilogue's scales before the consumer's turn) against main (338b9f1, build A: under
# the last k-block's MMAs), bench/experiments/ab-gemmalone.sh. (1) Checked against float64 on a
# ragged shape and small-M shapes where ping-pong tiles are the untuned pick, row and tensor
# scales, one round of 0.1 s; (2) the four short-loop shapes, row scales, two rounds of 0.2 s,
# then tensor scales as far as time allows.
set -u
mkdir -p /tmp/x && tar xJf .gpu/m.txz -C /tmp/x
R=/tmp/m; mkdir -p $R
ab() { # name dtype shapes tiles sustain rounds deadline
	SYMMTUNE_CUBIN_CACHE=/tmp/cubin BIN_A=/tmp/x/a BIN_B=/tmp/x/b OUT=$R/$1 DTYPE=$2 SHAPES="$3" TILES=$4 SUSTAIN=$5 ROUNDS=$6 \
		DEADLINE=$7 bash bench/experiments/ab-gemmalone.sh > $R/$1.log 2>&1
	echo "$1 at $SECONDS"
}
C="3001x5408x1040 1500x28680x1024 256x8192x1024 64x8192x4096 128x14336x4096"
T=default,128x128:s6:c2:g4:pp,64x128:s8:c2:g8:pp
ab check-row e4m3_row "$C" $T 0.1s 1 60
ab check-tensor e4m3 "$C" $T 0.1s 1 110
S="16384x8192x1024 2048x28672x1024 8192x8192x2048 4096x8192x1024"
ab row e4m3_row "$S" 128x128:s6:c2:g4:pp 0.2s 2 260
ab tensor e4m3 "$S" 128x128:s6:c2:g4:pp 0.2s 2 370
for n in check-row check-tensor row tensor; do echo "== $n"; grep -i 'rc \|deadline' $R/$n.log; done
tar czf $OUT/m.tgz -C /tmp m
