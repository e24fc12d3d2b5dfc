#!/bin/bash
# PLANNED (written 2026-12-07 10:02 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56, docs/results-gemm.md's item 11, on an H200: the H100's rule runs the untuned ping-pong
# pick 128x128:s6:c2:g4:pp as its clustered twin 128x128:s6:c2:g4:cl2 where rows start off 32-byte sectors
# (M a multiple of 256, up to 1,024): held out on the H100 with FP8 12 of 12 at or above (geometric mean
# 1.213) and bf16 8 of 8 (1.256) (2026-12-07-h100-offsector-cl2.md). The H200 has 4.8 TB/s of HBM against
# 3.35 and no run of the twin, so its rule keeps the ping-pong tile. Judged here on 20 shapes of its own
# (shapes.txt, by pick.py before the run, from the H200's rule at 7153880: every one's untuned tile is the
# ping-pong tile there, checked with gpu.DefaultTileFor): FP8 12 (three a M), bf16 8 (two a M).
#
# The method and rule are card-factors-2's (its run.sh and judge.py, unchanged; judge.py beside this only
# retitles it), as the H100's run: the untuned tile ("default": OLD, main's binary) against the twin
# (NEW), FP8 with row scales against cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second
# balanced). Q0: no WRONG or failed row, gemmalone's default is OLD on every shape, 8 or more timed (FP8;
# bf16's 8 are all it has). Q1 NEW over OLD, per dtype: at or above on two thirds (rounded up), geometric
# mean at least 1.02, none below 0.95 -> that dtype takes the twin on the H200 (cardTileEfficiency gets
# an H200 entry with offSectorTwin; if one dtype alone passes, the field is split by dtype first).
# An H200 only (on an H100 the rule already picks the twin, so Q0 fails): elsewhere it stops at once.
# About 18 s a shape: DEADLINE=380, timeout 420 s. Build: main's gemmalone from 375ad3b on (bash
# bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz to .gpu/bal/gm.txz);
# carry [".gpu/bal"].
set -u
d=$(dirname "$0")
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
	echo "not an H200: this plan judges the H200's rule only"
	exit 0
fi
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/ocs2#" -e "s#^if ! grep -q H100 \$R/machine.txt; then#if false; then#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/ocs2.tgz -C /tmp ocs2#" $src/run.sh > /tmp/ocs2.sh
grep -q '^R=/tmp/ocs2$' /tmp/ocs2.sh && grep -q '^if false; then' /tmp/ocs2.sh || { echo "card-factors-2's run.sh changed: not run"; exit 1; }
DEADLINE=${DEADLINE:-380} bash /tmp/ocs2.sh
