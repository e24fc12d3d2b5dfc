#!/bin/bash
# Call L (2026-12-04 night, call J's build): is the ping-pong FP8 tile's row-scale penalty at
# 16384x8192x1024 a warm-L2 effect? ncu flushes the caches before each pass, and there (call J)
# the row-scale kernel took no more cycles; back to back (call K) it took 6-15% longer. (1) Per
# call (50 calls, median) with a 64 MiB fill kernel before each call (its time included alike),
# each dtype, twice; (2) ncu of both dtypes with --cache-control none (the L2 as the kernel
# before left it).
set -u
mkdir -p /tmp/x && tar xJf .gpu/j.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/l; mkdir -p $R
S=16384x8192x1024 T=128x128:s6:c2:g4:pp
for d in e4m3_row e4m3 e4m3_row e4m3; do
	for f in 0 65536; do
		timeout 60 $BIN/gemmalone -dtype $d -shapes $S -tiles $T -fill-before $f -iters 50 -warmup 10 -bt=false >> $R/fill$f-$d.csv 2>>$R/err.txt
		echo "fill $f $d at $SECONDS rc $?"
	done
done
for d in e4m3_row e4m3; do
	OUT=$R SHAPE=$S TILES=$T DTYPE=$d NO_CUBLAS=1 NCU_ARGS="--cache-control none" timeout 120 bash bench/experiments/ncu-gemm.sh > $R/ncu-$d.log 2>&1
	echo "ncu $d at $SECONDS"
done
for f in $R/fill*.csv; do echo "== $f"; grep -v '^#' $f | grep 'fused\|cublaslt-fp8,' | cut -d, -f1-3,6,11 | cut -c1-120; done
grep -h 'Elapsed Cycles\|Duration\|SM Frequency\|Executed Ipc Active' $R/ncu/*details.txt
tar czf $OUT/l.tgz -C /tmp l
