#!/bin/bash
# Written 2026-12-06 09:25 UTC, before any run (as PLANNED-fp8-window/); ran 09:31 on 1 x H100 (../2026-12-06-h100-fp8-window.md).
# Issue 56's FP8 row-scale count: in the lean sets of 2026-12-06 (2026-12-06-h100-fp8-method.md) the
# cuBLASLt FP8 reference timed right after our row-scale kernel ran 2.7% slower (median; up to 22%) than
# the one right before it, in 0.2 s windows (the first third untimed), so the count was 89-99 of 129 by
# which bracket is taken. Is that a transient of the clock at the power cap, gone in 2 s windows, and
# which 0.2 s bracket matches the 2 s ratio?
# Eight row-scale shapes where the effect was large (after/before 1.07-1.19 in both rounds), the untuned
# tile, lean (-fp8-ref-only), two rounds, BALANCED=1 (the second round times the tile around the
# reference: gemmalone -kernel-outside): first in 0.2 s windows, then in 2 s windows (about 250 s).
# Rule, written before the run (judge.py beside this applies it):
#   Q1: the effect is a transient of short windows if the median over the eight shapes of the round-1
#       after/before reference ratio is at least 1.03 in 0.2 s windows and at most 1.01 in 2 s windows.
#   Q2: per shape, the 2 s ratio (mean of its two rounds) against the 0.2 s round-1 ratio by the
#       reference before only and by the mean of before and after: the bracket closer to it on at least 6
#       of 8 shapes is the one the row-scale count quotes on this card; else the range stays.
#   Every product must pass the float64 check.
# Bundle: bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz to
# .gpu/bal/gm.txz (gemmalone with -kernel-outside); carry [".gpu/bal"]; timeout 420 s.
set -u
d=$(dirname "$0")
mkdir -p /tmp/gm && tar xJf .gpu/bal/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/fp8w; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
cat $R/machine.txt
SH="256x8192x14336 256x14784x8192 1024x8192x14336 4096x14336x4096 4096x8192x7392 16384x8192x14336 16384x14336x8192 16384x2560x8192"
for w in 0.2s 2s; do
	dl=110; [ "$w" = 2s ] && dl=330
	OUT=$R/w$w SET=small SHAPES="$SH" DTYPES=e4m3_row TILES=default SUSTAIN=$w LONG_SUSTAIN=$w PER_SHAPE=60 \
		ROUNDS=2 BALANCED=1 DEADLINE=$dl FP8_REF_ONLY=1 bash bench/gemmalone-56.sh > $R/w$w.log 2>&1
	echo "window $w rc $? at $SECONDS"; grep -E 'deadline|rc ' $R/w$w.log | head -5
done
python3 "$d/judge.py" $R | tee $R/judge.md
tar czf $OUT/fp8w.tgz -C /tmp fp8w
