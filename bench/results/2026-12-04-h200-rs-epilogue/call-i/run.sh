#!/bin/bash
# Call I: with the kept build (rows by TMA, signalled a tile late), what the signalling itself costs,
# for the next session's choice: RS_FENCE_MODE 1 (the per-tile sys fence only before a chunk's flag),
# 2 (no fence: a bound), RS_NO_SIGNAL=1 (no signalling warp, no barrier: a bound), against today's
# (mode 0), two interleaved rounds, at the tiny product (17 µs, ~4 tiles a CTA) and the ping-pong shape.
set -u
mkdir -p /tmp/x && tar xJf .gpu/i.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/i; mkdir -p $O
go1() { # name extra
	timeout 60 $BIN/gemmalone -dtype e4m3 -shapes 1024x8192x1024,16384x8192x2048,4096x8192x1024 -tiles default -rs -sustain 0.2s -bt=false ${2:+-extra "$2"} >> $O/$1.csv 2>> $O/$1.err
	echo "$1 rc $? at $SECONDS"
}
for r in 1 2; do
	go1 m0 ""
	go1 m1 "-DRS_FENCE_MODE=1"
	go1 m2 "-DRS_FENCE_MODE=2"
	go1 ns "-DRS_NO_SIGNAL=1"
done
for f in $O/*.csv; do echo "== $f"; grep ",fused," $f | cut -d, -f1,4,6 | tr '\n' ' '; echo; done
cd $O && tar czf $OUT/i.tgz . && cd / && rm -rf $O
