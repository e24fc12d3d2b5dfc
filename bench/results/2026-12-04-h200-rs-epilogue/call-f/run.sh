#!/bin/bash
# Call F: ncu of call E's build at the ping-pong shape (e4m3 16384x8192x2048, 128x128:pp): the plain
# tile, its rows by TMA through the parameter maps ("rs") and by each warp's stores ("rs-regs"),
# with the SASS source page (per-instruction stall samples).
set -u
mkdir -p /tmp/x && tar xJf .gpu/e.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
O=$OUT/f; mkdir -p $O
NCU=$(command -v ncu || ls -d /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)
timeout 150 $NCU --clock-control none --profile-from-start off --kernel-name hopper_gemm --launch-count 3 \
	--section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats --section MemoryWorkloadAnalysis \
	-f -o $O/pp $BIN/gemmalone -dtype e4m3 -shapes 16384x8192x2048 -tiles default -rs -profile 1 -iters 3 -warmup 1 -bt=false > $O/pp.log 2>&1
echo "ncu rc $? at $SECONDS"
$NCU --import $O/pp.ncu-rep --page details > $O/pp-details.txt 2>&1
$NCU --import $O/pp.ncu-rep --page source --print-source sass --csv > $O/pp-sass.csv 2>&1
grep -E "Duration|SM Frequency|Elapsed Cycles" $O/pp-details.txt
cd $O && tar czf $OUT/f.tgz . && cd / && rm -rf $O
