#!/bin/bash
# Call I (2026-12-04 night): branch fp8-scale-prefetch (cd1f5f2, build B) against main (8c5f882,
# build A) through bench/experiments/ab-gemmalone.sh: (1) FP8 ragged shapes (M, N off every tile,
# K off the k-block), row and tensor scales, every candidate checked against float64 by gemmalone
# before its timing, one round; the clustered stream-K tile in FP8 among them (never run on a GPU
# before); (2) the four short-loop shapes, row and tensor scales, two rounds alternating builds;
# (3) -rs once for each build at 16384x8192x1024 row scales.
set -u
mkdir -p /tmp/x && tar xJf .gpu/i.txz -C /tmp/x
R=/tmp/i; mkdir -p $R
ab() { # name dtype shapes tiles sustain rounds deadline
	SYMMTUNE_CUBIN_CACHE=/tmp/cubin BIN_A=/tmp/x/a BIN_B=/tmp/x/b OUT=$R/$1 DTYPE=$2 SHAPES="$3" TILES=$4 SUSTAIN=$5 ROUNDS=$6 \
		DEADLINE=$7 bash bench/experiments/ab-gemmalone.sh > $R/$1.log 2>&1
	echo "$1 at $SECONDS"; grep -ci 'fail\|mismatch\|error' $R/$1/ab/err.txt
}
RAG="3001x5408x1040 777x7000x2064 4100x8200x1008 1500x28680x1024"
T=default,128x128:s6:c2:g4:pp,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:cl2:st,128x256:s4:c2:g8:st
ab check-row e4m3_row "$RAG" $T 0.05s 1 90
ab check-tensor e4m3 "$RAG" $T 0.05s 1 150
S="16384x8192x1024 4096x8192x1024 8192x8192x2048 2048x28672x1024"
T=default,128x128:s6:c2:g4:pp,128x256:s4:c2:g8:cl2
ab row e4m3_row "$S" $T 0.2s 2 330
ab tensor e4m3 "$S" $T 0.2s 2 440
for b in a b; do
	SYMMTUNE_CUBIN_CACHE=/tmp/cubin timeout 40 /tmp/x/$b/gemmalone -dtype e4m3_row -shapes 16384x8192x1024 \
		-tiles 128x128:s6:c2:g4:pp,128x256:s4:c2:g8:cl2 -sustain 0.2s -bt=false -rs > $R/rs-$b.csv 2>$R/rs-$b.err
	echo "rs $b at $SECONDS rc $?"
done
for n in check-row check-tensor row tensor; do echo "== $n"; tail -n 40 $R/$n.log | cut -c1-200; done
tar czf $OUT/i.tgz -C /tmp i
