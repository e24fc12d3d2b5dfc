#!/bin/bash
# Call H: the TMA epilogue as one template with two instantiations (plain: C's map, as call E's
# build; reduce-scatter: the owner's map chosen once per 16-row block, as call G's), against call
# E's build (gemmalone-e), alternating, two rounds: whether the plain product keeps call E's speed
# and the reduce-scatter's rows call G's cost. Every tile variant compiles; correctness across owners.
set -u
mkdir -p /tmp/x && tar xJf .gpu/h.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/h; mkdir -p $O
( cd /tmp && taskset -c 2-15 timeout 300 $BIN/hopper.test -test.run 'TestCompileAllTiles$' > $O/compile.log 2>&1; echo "compile rc $? at $SECONDS" >> $O/compile.log ) &
cpid=$!
T=default,128x128:s6:c2:g4:pp,128x256:s4:c2:g8,128x256:s4:c2:g8:cl2,256x128:s4:c2:g8,64x224:s6:c2:g8:pp,64x64:s10:c2:g8:pp
taskset -c 0-1 timeout 90 $BIN/gemmalone -rs -iters 3 -warmup 1 -bt=false -dtype e4m3_row -shapes 1664x4096x1024 -rsworld 8 -rschunks 3 -tiles $T > $O/check-w8.csv 2> $O/check-w8.err; echo "check rc $?"
taskset -c 0-1 timeout 90 $BIN/gemmalone -rs -iters 3 -warmup 1 -bt=false -dtype bf16 -shapes 1008x4104x1000 -tiles $T > $O/check-odd.csv 2> $O/check-odd.err; echo "check rc $?"
wait $cpid
tail -2 $O/compile.log
if ! grep -q "^PASS" $O/compile.log; then grep -m3 -A6 "error" $O/compile.log; cd $O && tar czf $OUT/h.tgz . ; exit 1; fi
go1() { # name bin dtype shapes
	timeout 120 $BIN/$2 -dtype $3 -shapes $4 -tiles default -rs -sustain 0.2s -bt=false >> $O/$1.csv 2>> $O/$1.err
	echo "$1 rc $? at $SECONDS"
}
E4=16384x8192x2048,8192x3584x8192,4096x8192x8192,1024x8192x1024,4096x14336x4096
for r in 1 2; do
	go1 e4m3 gemmalone e4m3 $E4
	go1 e4m3-e gemmalone-e e4m3 $E4
	go1 bf16 gemmalone bf16 16384x8192x1024,4096x8192x8192
	go1 bf16-e gemmalone-e bf16 16384x8192x1024,4096x8192x8192
done
for f in $O/*.csv; do echo "== $f"; grep ",fused," $f | cut -d, -f1,4,6,8,11 | tr '\n' ' '; echo; grep -c WRONG $f; done
cd $O && tar czf $OUT/h.tgz . && cd / && rm -rf $O
