#!/bin/bash
# Call A: where the reduce-scatter epilogue's cost goes (issue 56: -rs at most 2% over the plain kernel).
# One gemmalone built from an experiment tree whose signal_tile takes RS_FENCE_MODE (0: today's
# fence.acq_rel.sys before every tile's count; 1: the count alone per tile, the sys fence only before a
# chunk's flag; 2: relaxed count, no fence: a bound) and RS_NO_SIGNAL=1 (no signalling warp, no
# storers' barrier: a bound), plus GEMMALONE_RS_NOORDER=1 (no tile-order table; identity at one rank).
# Each run times the plain tile and its -rs row in one process; two interleaved rounds; then ncu.
set -u
mkdir -p /tmp/x && tar xJf .gpu/a.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/a; mkdir -p $O
go1() { # name dtype shapes extra [env]
	local name=$1 dt=$2 sh=$3 ex=$4
	shift 4
	env "$@" timeout 60 $BIN/gemmalone -dtype $dt -shapes $sh -tiles default -rs -sustain 0.2s -bt=false ${ex:+-extra "$ex"} >> $O/$name.csv 2>> $O/$name.err
	echo "$name rc $? at $SECONDS"
}
for r in 1 2; do
	for m in 0 1 2; do go1 e4m3-m$m e4m3 16384x8192x2048,8192x3584x8192 "-DRS_FENCE_MODE=$m"; done
	go1 e4m3-ns e4m3 16384x8192x2048,8192x3584x8192 "-DRS_NO_SIGNAL=1"
	go1 e4m3-noorder e4m3 16384x8192x2048,8192x3584x8192 "" GEMMALONE_RS_NOORDER=1
done
for m in 0 1; do
	go1 bf16-m$m bf16 16384x8192x1024,8192x3584x8192 "-DRS_FENCE_MODE=$m"
	go1 row-m$m e4m3_row 16384x8192x2048 "-DRS_FENCE_MODE=$m"
done
NCU=$(command -v ncu || ls -d /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)
mkdir -p $O/ncu
for m in 0 1; do
	[ $SECONDS -gt 420 ] && break
	timeout 100 $NCU --clock-control none --profile-from-start off --kernel-name hopper_gemm --launch-count 2 \
		--section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats \
		-f -o $O/ncu/m$m $BIN/gemmalone -dtype e4m3 -shapes 16384x8192x2048 -tiles default -rs -profile 1 -iters 3 -warmup 1 -bt=false -extra "-DRS_FENCE_MODE=$m" > $O/ncu/m$m.log 2>&1
	echo "ncu m$m rc $? at $SECONDS"
	$NCU --import $O/ncu/m$m.ncu-rep --page details > $O/ncu/m$m-details.txt 2>&1
	$NCU --import $O/ncu/m$m.ncu-rep --page source --print-source sass --csv > $O/ncu/m$m-sass.csv 2>&1
done
for f in $O/*.csv; do echo "== $f"; grep ",fused," $f | cut -d, -f1,3,4,6,11; done
find $O/ncu -name '*.ncu-rep' -size +12M -delete
cd $O && tar czf $OUT/a.tgz . && cd / && rm -rf $O
