#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-07 06:55-06:58 UTC (DEADLINE=230, 200 s, all 12 shapes): 2026-12-07-h100-card-factors-5.md.
# Passes (9 of 12, geometric mean 1.044, worst 0.984): the patch went to main.
# PLANNED (written 2026-12-07 03:35 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56: the H100's FP8 factor for the ping-pong tile (0.889 of 128x256:cl2's rate in FP8 row scales,
# 2026-12-06-h100-fp8-tile-factors.md), held out a fourth time, now kept from handing the pick to any whole
# 128x256 tile, plain or clustered: card-factors-5.patch (beside this, off main at c511b44; FP8 only) weighs
# the tiles with the card's factors and, where that picks a 128x256 tile, runs main's pick instead (the cost
# stream-K is weighed against stays the factor's). Why: in the three held-out runs (card-factors-2, -3, -4)
# the factor's moves to a whole 128x256 tile were at or above the ping-pong tile on 8 of 15, geometric mean
# 1.003, worst 0.940 (each run's failing shape was one), its other moves (128x224, 128x160, 256x160,
# stream-K) on 20 of 22, 1.052, worst 0.992 (counted 03:45 from the three pages' tables, before any run).
# card-factors-4.md's reading named this patch; its shapes chose it, so it is judged here on shapes none of
# those runs timed.
# Its FP8 picks differ from main's on 226 of 5,796 grid shapes (grid.txt; 128x224 126, 128x160 78, stream-K
# 16, 256x160 6). 12 shapes (shapes.txt, by pick.py before the run, none timed before): 128x224 5, 128x160
# 3, stream-K 2, 256x160 2.
#
# The method and rule are card-factors-2's (its run.sh and judge.py, unchanged): main's untuned tile
# ("default": OLD) against the patch's pick (NEW), FP8 row scales against cuBLASLt FP8 alone (lean), 1 s
# windows, two rounds a shape (the second balanced). Q0: no WRONG or failed row, gemmalone's default is OLD
# on every shape, 8 or more timed. Q1 NEW over OLD: at or above on two thirds (rounded up), geometric mean
# at least 1.02, none below 0.95 -> the patch goes to main. (The judge's bf16 part prints no verdict: no
# bf16 shape here.)
# An H100 only (on an H200 the call stops). About 17 s a shape: DEADLINE=230, timeout 270 s.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"].
set -u
d=$(dirname "$0")
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/cf5#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/cf5.tgz -C /tmp cf5#" -e "s#python3 \"\$d/judge.py\"#python3 $src/judge.py#" \
	$src/run.sh > /tmp/cf5.sh
grep -q '^R=/tmp/cf5$' /tmp/cf5.sh || { echo "card-factors-2's run.sh changed: not run"; exit 1; }
DEADLINE=${DEADLINE:-230} bash /tmp/cf5.sh
