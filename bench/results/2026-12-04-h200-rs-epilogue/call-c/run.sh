#!/bin/bash
# Call C: rows by TMA did not lower -rs's cost (call B). Where it goes now: the same experiment knobs
# as call A on the TMA path (RS_NO_SIGNAL=1: no signalling warp, no storers' barrier; RS_FENCE_MODE
# 2: relaxed count, no fence; 3: fence.acq_rel.gpu for .sys), two interleaved rounds; and the checks
# across owners again with TMA stores only where rows per rank are a multiple of 16.
set -u
mkdir -p /tmp/x && tar xJf .gpu/c.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/c; mkdir -p $O
chk() { # name args...
	local name=$1
	shift
	timeout 90 $BIN/gemmalone -rs -iters 3 -warmup 1 -bt=false "$@" >> $O/check-$name.csv 2>> $O/check-$name.err
	echo "check $name rc $? at $SECONDS"
}
T=default,128x128:s6:c2:g4:pp,128x256:s4:c2:g8,128x256:s4:c2:g8:cl2,256x128:s4:c2:g8,64x224:s6:c2:g8:pp,64x64:s10:c2:g8:pp
chk w8-1600 -dtype bf16 -shapes 1600x4096x1024 -rsworld 8 -rschunks 2 -tiles $T
chk w8-96 -dtype bf16 -shapes 96x4096x1024 -rsworld 8 -tiles $T
chk w8-1664 -dtype e4m3_row -shapes 1664x4096x1024 -rsworld 8 -rschunks 3 -tiles $T
go1() { # name dtype shapes extra
	timeout 90 $BIN/gemmalone -dtype $2 -shapes $3 -tiles default -rs -sustain 0.2s -bt=false ${4:+-extra "$4"} >> $O/$1.csv 2>> $O/$1.err
	echo "$1 rc $? at $SECONDS"
}
for r in 1 2; do
	go1 e4m3-m0 e4m3 16384x8192x2048,8192x3584x8192 ""
	go1 e4m3-ns e4m3 16384x8192x2048,8192x3584x8192 "-DRS_NO_SIGNAL=1"
	go1 e4m3-m2 e4m3 16384x8192x2048,8192x3584x8192 "-DRS_FENCE_MODE=2"
	go1 e4m3-m3 e4m3 16384x8192x2048,8192x3584x8192 "-DRS_FENCE_MODE=3"
done
go1 bf16-m0 bf16 16384x8192x1024 ""
go1 bf16-ns bf16 16384x8192x1024 "-DRS_NO_SIGNAL=1"
for f in $O/*.csv; do echo "== $f"; grep ",fused," $f | cut -d, -f1,3,4,5,6,11; grep -c WRONG $f; done
head -3 $O/*.err
cd $O && tar czf $OUT/c.tgz . && cd / && rm -rf $O
