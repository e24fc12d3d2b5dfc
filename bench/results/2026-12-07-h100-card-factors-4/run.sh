#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-07 02:52-02:55 UTC (DEADLINE=230, 198 s, all 12 shapes): 2026-12-07-h100-card-factors-4.md.
# Does not pass (8 of 12, geometric mean 1.036, worst 0.940): the patch stays off main.
# PLANNED (written 2026-12-07 00:35 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56: the H100's FP8 factor for the ping-pong tile (0.889 of 128x256:cl2's rate in FP8 row scales,
# 2026-12-06-h100-fp8-tile-factors.md), held out a third time, now kept out of the choice between the
# ping-pong tile and the clustered 128x256: card-factors-4.patch (beside this, off main at 494e850; FP8 only)
# applies it only where the rule would not cluster a 128x256 pick (below clusterRows, 4,096 rows, and below
# offSectorClusterRows where K starts rows off 32-byte sectors). Why: held out twice (card-factors-2, 22:39;
# card-factors-3, 2026-12-07 00:19), the factor's moves to the clustered 128x256 were at or above the
# ping-pong tile on 3 of 6 (0.941 and 0.948, each run's failing shape), its other moves on 17 of 19.
# Its FP8 picks differ from main's on 403 of 5,796 grid shapes (grid.txt), all below 4,096 rows. 12 shapes
# (shapes.txt, by pick.py before the run, none timed before): plain 128x256 4 (the largest change, and the
# tile the bf16 factor lost with: card-factors-2's bf16 part), 128x224 3, 128x160 2, stream-K 2, 256x160 1.
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
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/cf4#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/cf4.tgz -C /tmp cf4#" -e "s#python3 \"\$d/judge.py\"#python3 $src/judge.py#" \
	$src/run.sh > /tmp/cf4.sh
bash /tmp/cf4.sh
