#!/bin/bash
# Ran 2026-12-07 00:19-00:23 UTC on 1 x H100, after the bf16 part of card-factors-2 in the same call
# (DEADLINE=$((555-SECONDS)) there): 2026-12-07-h100-card-factors-3.md. Does not pass; the patch stays off main.
# PLANNED (written 2026-12-06 23:18 UTC, before any run, as PLANNED-card-factors-3/).
# Issue 56: the H100's FP8 factor for the ping-pong tile (0.889 of 128x256:cl2's rate in FP8 row scales,
# 2026-12-06-h100-fp8-tile-factors.md), held out a second time with a bound fixed before this run:
# only products of 4,096 columns or more (fp8CardMinColumns) take it. card-factors-2 (22:39 UTC) moved the
# pick the right way on 10 of 12 shapes (geometric mean 1.037) but lost 5.9% at 10240 x 3072 x 4096, where
# the factor handed the ping-pong tile's place to the clustered 128x256 at 12 columns of 256.
# card-factors-3.patch (beside this, off main at 5ca8135; FP8 only, the bf16 128x160 factor is
# card-factors-2's own part): its FP8 picks differ from main's on 437 of 5,796 grid shapes (grid.txt), v2's
# 460 less the 23 at N 3,072 and 3,584. 13 shapes (shapes.txt, by pick.py before the run, none timed
# before; five of them at N below 8,192, near the bound).
#
# The method and rule are card-factors-2's (its run.sh and judge.py, unchanged): main's untuned tile
# ("default": OLD) against the patch's pick (NEW), FP8 row scales against cuBLASLt FP8 alone (lean), 1 s
# windows, two rounds a shape (the second balanced). Q0: no WRONG or failed row, gemmalone's default is OLD
# on every shape, 8 or more timed. Q1 NEW over OLD: at or above on two thirds (rounded up), geometric mean
# at least 1.02, none below 0.95 -> the patch goes to main. (The judge's bf16 part prints no verdict: no
# bf16 shape here.)
# An H100 only (on an H200 the call stops). About 17 s a shape: DEADLINE=240, timeout 280 s.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"].
set -u
d=$(dirname "$0")
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/cf3#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/cf3.tgz -C /tmp cf3#" -e "s#python3 \"\$d/judge.py\"#python3 $src/judge.py#" \
	$src/run.sh > /tmp/cf3.sh
bash /tmp/cf3.sh
