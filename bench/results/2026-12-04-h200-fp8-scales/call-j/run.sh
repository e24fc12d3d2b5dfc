#!/bin/bash
# Call J (2026-12-04 night, main at 338b9f1: the scales loaded early): (1) ncu of the short-loop
# ping-pong FP8 tile at 16384x8192x1024, row scales against tensor scales (the row-scale tile
# still ran about 9% slower in call I, cuBLASLt the same either way), and cuBLASLt's row-scale
# kernel; (2) FP8's six products of 5,000 GFLOP or more of issue 56's set (16,384 rows), row and
# tensor scales, each kernel 2 s back to back (bench/gemmalone-56.sh's long window), the untuned
# tile and the clustered stream-K tile, one round.
set -u
mkdir -p /tmp/x && tar xJf .gpu/j.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/j; mkdir -p $R
OUT=$R SHAPE=16384x8192x1024 TILES=128x128:s6:c2:g4:pp DTYPE=e4m3_row timeout 200 bash bench/experiments/ncu-gemm.sh > $R/ncu-row.log 2>&1
echo "ncu row at $SECONDS"
OUT=$R SHAPE=16384x8192x1024 TILES=128x128:s6:c2:g4:pp DTYPE=e4m3 NO_CUBLAS=1 timeout 120 bash bench/experiments/ncu-gemm.sh > $R/ncu-tensor.log 2>&1
echo "ncu tensor at $SECONDS"
S="16384x8192x28672 16384x8192x29568 16384x28672x8192 16384x29568x8192 16384x57344x8192 16384x59136x8192"
for d in e4m3_row e4m3; do
	dl=$(( (540 - SECONDS) / 2 - 20 )); [ $d = e4m3 ] && dl=$((540 - SECONDS - 30)) # the table's 20 s after
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d LONG_SUSTAIN=2s ROUNDS=1 PER_SHAPE=60 DEADLINE=$dl \
		TILES=default,128x256:s4:c2:g8:cl2:st bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"; grep -c ',fused,' $R/$d/gemmalone-56/gemmalone-$d.csv
done
for d in e4m3_row e4m3; do tail -n 30 $R/$d.log | grep '^| 16384' | cut -c1-200; done
tar czf $OUT/j.tgz -C /tmp j
