#!/bin/bash
# Call E: the owners' slot maps as a kernel parameter (RSMaps), as C's map is, instead of in the
# table in global memory (call D: with no signalling, no wait and no order table, rows by TMA through
# maps in global memory still cost the ping-pong tile 9.5%). Every tile variant compiles (NVRTC, no
# spills); correctness across owners; then -rs (rows "rs" by TMA, "rs-regs" by each warp's stores)
# beside each plain default tile, two interleaved rounds, bf16, e4m3 and e4m3 with row scales.
set -u
mkdir -p /tmp/x && tar xJf .gpu/e.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/e; mkdir -p $O
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
chk w8-1024 -dtype bf16 -shapes 1024x4096x1024 -rsworld 8 -rschunks 2 -tiles $T
chk w8-96 -dtype bf16 -shapes 96x4096x1024 -rsworld 8 -tiles $T
chk w4-e4m3 -dtype e4m3 -shapes 4096x3584x2048 -rsworld 4 -rschunks 4 -tiles $T
wait $cpid
tail -2 $O/compile.log
if ! grep -q "^ok\|^PASS" $O/compile.log; then grep -m3 -A6 "error" $O/compile.log; cd $O && tar czf $OUT/e.tgz . ; exit 1; fi
go1() { # name dtype shapes
	timeout 120 $BIN/gemmalone -dtype $2 -shapes $3 -tiles default -rs -sustain 0.2s -bt=false >> $O/$1.csv 2>> $O/$1.err
	echo "$1 rc $? at $SECONDS"
}
for r in 1 2; do
	go1 e4m3 e4m3 16384x8192x2048,8192x3584x8192,4096x8192x8192,1024x8192x1024,4096x14336x4096
	go1 bf16 bf16 16384x8192x1024,8192x3584x8192,4096x8192x8192,4096x14336x4096,1024x28672x8192
	go1 row e4m3_row 16384x8192x2048,8192x3584x8192
done
for f in $O/*.csv; do echo "== $f"; grep ",fused," $f | cut -d, -f1,4,6,11; grep -c WRONG $f; done
cd $O && tar czf $OUT/e.tgz . && cd / && rm -rf $O
