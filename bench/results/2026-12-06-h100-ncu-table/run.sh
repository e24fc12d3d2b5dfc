#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-06 07:53 UTC (call D, 146 s): 2026-12-06-h100-ncu-table.md.
# PLANNED (written 2026-12-06 07:58 UTC, before any run; rename the folder to the day and card it runs on).
# Issue 56 asks docs/results.md to say what limits each kernel, in TFLOP/s and as a share of the peak.
# Call B of this session (1 x H100, ncu, PLANNED-h100-ncu-pp) split the ratio to cuBLASLt into SM cycles
# and SM clock (bench/ncu_table.py's new column; clocks left free): at 16384 x 8192 x 8192 the ping-pong tile
# took 0.7% fewer cycles than cuBLASLt's kernel and lost 9% on the clock (1.44 against 1.58 GHz, 2.0 against
# 0.97 TB/s of DRAM traffic), so at the 700 W cap part of a kernel's limit is the power it draws a cycle.
# This call profiles the issue's own table (its 11 shapes), the untuned tile (gpu.DefaultTileFor) against
# cuBLASLt's best, in bf16 and in FP8 with row scales: each shape's limit, TFLOP/s, share of the peak, and
# the ratio as cycles x clock. No keep rule: a profile for the docs.
#   Bundle: bash bench/results/2026-12-06-h100-fp8-set-retime/build.sh (.gpu/set/gm.txz); carry [".gpu/set"].
set -u
mkdir -p /tmp/gm && tar xJf .gpu/set/gm.txz -C /tmp/gm
export SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ncutab; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
SH="64x14336x4096 128x14336x4096 256x8192x8192 512x7168x4096 1024x28672x8192 4096x1792x4096 4096x14336x4096
8192x3584x8192 12288x5120x5120 8192x8192x8192 16384x3584x8192"
for dt in bf16 e4m3_row; do
	mkdir -p $R/$dt
	BIN=/tmp/gm/bin OUT=$R/$dt SHAPES="$(echo $SH)" DTYPE=$dt TILES=default PER_SHAPE=45 DEADLINE=${DEADLINE:-200} \
		bash bench/ncu-gemm.sh > $R/$dt/ncu.log 2>&1
	echo "ncu-gemm $dt rc $? at $SECONDS"; sed -n '5,20p' $R/$dt/ncu-gemm/table.md 2>/dev/null
done
tar czf $OUT/ncutab.tgz -C /tmp ncutab
