#!/bin/bash
# Call B (2026-12-05, main at 33ca574 with the pp-cl2 branch's build, .gpu/pp.txz): (1) 128x128:pp:cl2
# against 128x128:pp on six FP8 short-loop shapes (K 1,024-2,048) that call A did not use, tensor and row
# scales, and bf16 on call A's four and the six, 0.2 s windows, two rounds (tiles reversed in the
# second); (2) ncu (SpeedOfLight, memory) of main's untuned bf16 tile at 64 and 256 rows, where issue
# 56's bf16 headroom is (the "waiting for a GPU" list's third item), with cuBLASLt's kernel beside it.
set -u
mkdir -p /tmp/x && tar xJf .gpu/pp.txz -C /tmp/x && mkdir -p /tmp/m && tar xJf .gpu/a.txz -C /tmp/m
export SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ppb; mkdir -p $R
T=128x128:s6:c2:g4:pp,128x128:s6:c2:g4:pp:cl2
S="1024x8192x1024 8192x8192x1024 12288x8192x1024 4096x28672x1024 16384x3584x2048 8192x14336x2048"
A="16384x8192x1024 2048x28672x1024 8192x8192x2048 4096x8192x1024"
for d in e4m3_row e4m3 bf16; do
	sh="$S"; [ $d = bf16 ] && sh="$S $A"
	BIN=/tmp/x/bin OUT=$R/$d SET=small SHAPES="$sh" DTYPES=$d TILES=$T SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=30 DEADLINE=70 \
		bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"
done
for s in 64x14336x4096 256x8192x8192; do
	BIN=/tmp/m/bin OUT=$R/ncu-$s SHAPE=$s TILES=default DTYPE=bf16 NCU_ARGS="--section MemoryWorkloadAnalysis_Tables" timeout 70 bash bench/experiments/ncu-gemm.sh > $R/ncu-$s.log 2>&1
	echo "ncu $s rc $? at $SECONDS"
done
for d in e4m3_row e4m3 bf16; do tail -n 40 $R/$d.log | grep '^| [0-9]' | cut -c1-200; done
tar czf $OUT/ppb.tgz -C /tmp ppb
