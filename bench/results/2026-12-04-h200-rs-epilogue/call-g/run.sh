#!/bin/bash
# Call G: one epilogue for a plain product's tile and a reduce-scatter's tile stored by TMA (the map
# and row chosen per 16-row block), in place of call E's two copies (gemmalone-e is call E's build).
# Every tile variant compiles; correctness across owners; then -rs beside each plain default tile,
# call E's build and this one alternating, two rounds each.
set -u
mkdir -p /tmp/x && tar xJf .gpu/g.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/g; mkdir -p $O
( cd /tmp && taskset -c 2-15 timeout 300 $BIN/hopper.test -test.run 'TestCompileAllTiles$' > $O/compile.log 2>&1; echo "compile rc $? at $SECONDS" >> $O/compile.log ) &
cpid=$!
chk() { # name args...
	local name=$1
	shift
	taskset -c 0-1 timeout 90 $BIN/gemmalone -rs -iters 3 -warmup 1 -bt=false "$@" >> $O/check-$name.csv 2>> $O/check-$name.err
	echo "check $name rc $? at $SECONDS"
}
T=default,128x128:s6:c2:g4:pp,128x256:s4:c2:g8,128x256:s4:c2:g8:cl2,256x128:s4:c2:g8,64x224:s6:c2:g8:pp,64x64:s10:c2:g8:pp
chk w8-1664 -dtype e4m3_row -shapes 1664x4096x1024 -rsworld 8 -rschunks 3 -tiles $T
chk w8-96 -dtype bf16 -shapes 96x4096x1024 -rsworld 8 -tiles $T
chk w1-odd -dtype bf16 -shapes 1008x4104x1000,200x2056x520 -tiles $T
chk w4-e4m3 -dtype e4m3 -shapes 4096x3584x2048 -rsworld 4 -rschunks 4 -tiles $T
wait $cpid
tail -2 $O/compile.log
if ! grep -q "^PASS" $O/compile.log; then grep -m3 -A6 "error" $O/compile.log; cd $O && tar czf $OUT/g.tgz . ; exit 1; fi
go1() { # name bin dtype shapes
	timeout 120 $BIN/$2 -dtype $3 -shapes $4 -tiles default -rs -sustain 0.2s -bt=false >> $O/$1.csv 2>> $O/$1.err
	echo "$1 rc $? at $SECONDS"
}
E4=16384x8192x2048,8192x3584x8192,4096x8192x8192,1024x8192x1024,4096x14336x4096
B16=16384x8192x1024,8192x3584x8192,4096x8192x8192,4096x14336x4096,1024x28672x8192
for r in 1 2; do
	go1 e4m3 gemmalone e4m3 $E4
	go1 e4m3-e gemmalone-e e4m3 $E4
	go1 bf16 gemmalone bf16 $B16
	go1 bf16-e gemmalone-e bf16 $B16
	go1 row gemmalone e4m3_row 16384x8192x2048,8192x3584x8192
done
for f in $O/*.csv; do echo "== $f"; grep ",fused," $f | cut -d, -f1,4,6,11 | tr '\n' ' '; echo; grep -c WRONG $f; done
cd $O && tar czf $OUT/g.tgz . && cd / && rm -rf $O
