#!/bin/bash
# Written 2026-12-06 08:50 UTC, before any run (as PLANNED-fp8-method/); ran 09:03 on 1 x H100 (../2026-12-06-h100-fp8-method.md).
# Issue 56's FP8 bars: which reference mode counts them. Call G of 2026-12-06 (1 x H100,
# 2026-12-06-h100-fp8-lean.md) found the two modes 3-5% apart at 256 and 1,024 rows, with our kernel's
# time the same in both and cuBLASLt FP8's slower when timed right after the bf16 product (the default
# mode's order: bf16, FP8, ours, FP8, bf16). Its rule asked the modes to agree; this one asks where the
# difference comes from, on twelve shapes (call G's six and six it did not time), tensor scales, the
# untuned tile, 0.2 s windows, the modes alternated, two rounds each (about 180 s).
# Rule, written before the run: the lean mode (-fp8-ref-only, cuBLASLt FP8 alone around each tile) is the
# FP8 count's method if (1) every product passes the float64 check; (2) our kernel's mean time (of its two
# rounds) differs between the modes by no more than its larger round-to-round difference on at least 10
# of the 12 shapes; and (3) of the shapes where the modes' mean ratios differ by more than the larger of
# their round-to-round differences, at least three quarters have the FP8 reference's mean time moving more
# than ours (in relative terms). Else both modes stay and every FP8 count gives both.
#   Bundle: bash bench/results/2026-12-06-h100-fp8-set-retime/build.sh (.gpu/set/gm.txz); carry [".gpu/set"].
set -u
DT=${DT:-e4m3}
mkdir -p /tmp/gm && tar xJf .gpu/set/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/fp8m-$DT; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
SH="64x8192x8192 256x8192x8192 1024x28672x8192 4096x14336x4096 8192x3584x8192 16384x8192x8192
64x1280x8192 512x7168x4096 256x28672x8192 1024x10240x8192 4096x8192x7392 16384x2560x8192"
for r in 1 2; do
	for lean in 0 1; do
		OUT=$R/r$r-$lean SET=small SHAPES="$(echo $SH)" DTYPES=$DT TILES=default SUSTAIN=0.2s LONG_SUSTAIN=0.2s \
			PER_SHAPE=40 DEADLINE=${STEP:-120} FP8_REF_ONLY=$lean bash bench/gemmalone-56.sh > $R/r$r-$lean.log 2>&1
		echo "round $r lean $lean rc $? at $SECONDS"
	done
done
python3 "$(dirname "$0")/judge.py" $R > $R/judge.md 2>&1; cat $R/judge.md
tar czf $OUT/fp8m-$DT.tgz -C /tmp fp8m-$DT
