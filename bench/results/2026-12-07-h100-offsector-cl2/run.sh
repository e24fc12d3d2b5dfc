#!/bin/bash
# Ran as planned on 2026-12-07, 09:07-09:13 UTC, on 1 x NVIDIA H100 80GB HBM3 (driver 580.159.04, 700 W):
#   DEADLINE=370 bash bench/results/PLANNED-offsector-cl2/run.sh   (carry [".gpu/bal"], a bundle of main at
#   00668a3); 368 s; raw files in ocs.tgz; page: ../2026-12-07-h100-offsector-cl2.md.
# PLANNED (written 2026-12-07 07:40 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56, docs/results-gemm.md's item 11: where a matrix's rows start off 32-byte sectors (K times
# the element's bytes an odd multiple of 16), should the untuned rule's 128x128:s6:c2:g4:pp pick become its
# clustered twin 128x128:s6:c2:g4:cl2 (two CTAs along M, B multicast)? Why: offline-cl2's held-out run
# (2026-12-07-h100-offline-cl2.md, rows off 128-byte lines) failed its rule in both dtypes, but read after
# it the twin won where rows are off sectors (bf16 4 of 4 at 1.21-1.29, FP8 7 of 8 at 1.20-1.35, one 0.858)
# and not where rows are on sectors and off lines (bf16 1 of 4); bf16 and FP8 off lines share one limit,
# L2 tag requests (2026-12-07-h100-ncu-offline-bf16.md). That run chose this scope, so it is judged here on
# 20 shapes no run timed (shapes.txt, by pick.py before the run, from the rule as on main at 3059258, after
# the H100's FP8 card factor): M a multiple of 256 (256-1,024), rows off sectors, the rule's pick the
# ping-pong tile; FP8 12 (three a M), bf16 8 (two a M).
#
# The method and rule are card-factors-2's (its run.sh and judge.py, unchanged; judge.py beside this only
# retitles it): the untuned tile ("default": OLD, main's binary, no patch) against the clustered twin (NEW),
# FP8 with row scales against cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second
# balanced). Q0: no WRONG or failed row, gemmalone's default is OLD on every shape, 8 or more timed (FP8;
# bf16's 8 are all it has). Q1 NEW over OLD, per dtype: at or above on two thirds (rounded up), geometric
# mean at least 1.02, none below 0.95 -> the rule takes the clustered twin there for that dtype, on the H100
# (by the card's name, as its tile factors; an H200 would need its own run).
# An H100: the picks are the H100's rule's (on an H200 Q0 fails wherever its pick differs). About 18 s a
# shape: DEADLINE=380, timeout 420 s.
# Build: main's gemmalone at 3059258 or later (the FP8 card factor: an older bundle's default differs on
# some FP8 shapes and Q0 fails there): bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move
# .gpu/wide/gm.txz to .gpu/bal/gm.txz; carry [".gpu/bal"].
set -u
d=$(dirname "$0")
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/ocs#" -e "s#^if ! grep -q H100 \$R/machine.txt; then#if false; then#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/ocs.tgz -C /tmp ocs#" $src/run.sh > /tmp/ocs.sh
grep -q '^R=/tmp/ocs$' /tmp/ocs.sh && grep -q '^if false; then' /tmp/ocs.sh || { echo "card-factors-2's run.sh changed: not run"; exit 1; }
DEADLINE=${DEADLINE:-380} bash /tmp/ocs.sh
