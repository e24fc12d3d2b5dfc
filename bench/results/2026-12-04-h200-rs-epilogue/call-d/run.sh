#!/bin/bash
# Call D: with rows by TMA and no signalling at all (call C's RS_NO_SIGNAL) the ping-pong tile still
# lost 10-13%. What is left of the reduce-scatter path: the tile-order table (GEMMALONE_RS_NOORDER=1:
# none, the identity at one rank), the wait for the tile before's stores and the proxy fence
# (RS_NO_FLUSH_WAIT=1: neither; RS_NO_PROXY_FENCE=1: the wait without the fence). Two interleaved
# rounds at the ping-pong shape; then ncu of the plain and the TMA rows (today's signalling).
set -u
mkdir -p /tmp/x && tar xJf .gpu/d.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/d; mkdir -p $O
go1() { # name extra [env]
	local name=$1 ex=$2
	shift 2
	env "$@" timeout 60 $BIN/gemmalone -dtype e4m3 -shapes 16384x8192x2048 -tiles default -rs -sustain 0.2s -bt=false ${ex:+-extra "$ex"} >> $O/$name.csv 2>> $O/$name.err
	echo "$name rc $? at $SECONDS"
}
for r in 1 2; do
	go1 ns "-DRS_NO_SIGNAL=1"
	go1 ns-noorder "-DRS_NO_SIGNAL=1" GEMMALONE_RS_NOORDER=1
	go1 ns-nowait "-DRS_NO_SIGNAL=1 -DRS_NO_FLUSH_WAIT=1"
	go1 ns-nowait-noorder "-DRS_NO_SIGNAL=1 -DRS_NO_FLUSH_WAIT=1" GEMMALONE_RS_NOORDER=1
	go1 m0-nofence "-DRS_NO_PROXY_FENCE=1"
	go1 m0-noorder "" GEMMALONE_RS_NOORDER=1
done
NCU=$(command -v ncu || ls -d /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)
mkdir -p $O/ncu
timeout 100 $NCU --clock-control none --profile-from-start off --kernel-name hopper_gemm --launch-count 3 \
	--section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats \
	-f -o $O/ncu/tma $BIN/gemmalone -dtype e4m3 -shapes 16384x8192x2048 -tiles default -rs -profile 1 -iters 3 -warmup 1 -bt=false > $O/ncu/tma.log 2>&1
echo "ncu rc $? at $SECONDS"
$NCU --import $O/ncu/tma.ncu-rep --page details > $O/ncu/tma-details.txt 2>&1
$NCU --import $O/ncu/tma.ncu-rep --page source --print-source sass --csv > $O/ncu/tma-sass.csv 2>&1
for f in $O/*.csv; do echo "== $f"; grep ",fused," $f | cut -d, -f1,4,6,11; done
grep -E "Duration|SM Frequency" $O/ncu/tma-details.txt
cd $O && tar czf $OUT/d.tgz . && cd / && rm -rf $O
