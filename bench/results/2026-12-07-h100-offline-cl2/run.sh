#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-07 06:59-07:05 UTC (DEADLINE=380, 369 s, all 20 shapes): 2026-12-07-h100-offline-cl2.md.
# Does not pass for either dtype (FP8 10 of 12, 1.127, worst 0.846; bf16 5 of 8, 1.091, worst 0.825): the rule stays.
# PLANNED (written 2026-12-07 03:03 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56, docs/results-gemm.md's item 11: where a matrix's rows start off 128-byte lines (K times
# the element's bytes not a multiple of 128), should the untuned rule's 128x128:s6:c2:g4:pp pick become
# its clustered twin 128x128:s6:c2:g4:cl2 (two CTAs along M, B multicast)? Why: at 256 x 8192 x 3696 FP8
# our tile is held by L2 tag requests (70% of peak; 2026-12-07-h100-ncu-offsector.md) and the clustered
# 128x128 ran 0.831 of cuBLASLt FP8 against the pick's 0.735 (one round, 0.2 s), while at K = 3,584 it ran
# 0.937 against 1.005. The candidate's scope: M a multiple of 256, rows off 128-byte lines, the rule's pick
# 128x128:pp; no other pick moves. 20 shapes no run timed (shapes.txt, by pick.py before the run): FP8 12
# (three a M of 256, 512, 768 and 1,024; rows off 32-byte sectors on 8, on sectors but off lines on 4),
# bf16 8 (two a M, one of each).
#
# The method and rule are card-factors-2's (its run.sh and judge.py, unchanged; judge.py beside this only
# retitles it): the untuned tile ("default": OLD, main's binary, no patch) against the clustered twin (NEW),
# FP8 with row scales against cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second
# balanced). Q0: no WRONG or failed row, gemmalone's default is OLD on every shape, 8 or more timed. Q1 NEW
# over OLD, per dtype: at or above on two thirds (rounded up), geometric mean at least 1.02, none below 0.95
# -> the rule takes the clustered twin there for that dtype, on the H100 (by the card's name, as its tile
# factors; an H200 would need its own run).
# An H100: the picks are the H100's rule's (on an H200 Q0 fails wherever its pick differs). About 17 s a
# shape: DEADLINE=380, timeout 420 s.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"].
set -u
d=$(dirname "$0")
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/ocl2#" -e "s#^if ! grep -q H100 \$R/machine.txt; then#if false; then#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/ocl2.tgz -C /tmp ocl2#" $src/run.sh > /tmp/ocl2.sh
grep -q '^R=/tmp/ocl2$' /tmp/ocl2.sh && grep -q '^if false; then' /tmp/ocl2.sh || { echo "card-factors-2's run.sh changed: not run"; exit 1; }
DEADLINE=${DEADLINE:-380} bash /tmp/ocl2.sh
