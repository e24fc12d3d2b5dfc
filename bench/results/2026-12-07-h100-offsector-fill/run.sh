#!/bin/bash
# Ran as planned on 2026-12-07, 15:24-15:31 UTC, on 1 x NVIDIA H100 80GB HBM3 (driver 580.159.04, 700 W):
#   DEADLINE=$((540-SECONDS)) bash bench/results/PLANNED-offsector-fill/run.sh   (22 shapes, 417 s; bundle: main at 06b5970)
# Results: ofill.tgz beside this (verdict.md inside); the page is ../2026-12-07-h100-offsector-fill.md.
# PLANNED (written 2026-12-07 15:10 UTC, committed in acbd046 at 15:11, before any run; rename the folder to the day and card once it has
# run). Issue 56, the H100's untuned rule where A's and B's rows start off 32-byte sectors: at a multiple of
# 256 rows up to 1,024 it picks the clustered twin 128x128:s6:c2:g4:cl2 there (2026-12-07-h100-offsector-cl2.md).
# Read after offsector-wide-1024 (2026-12-07-h100-offsector-wide-1024.md, not judged there): at 1,024 rows
# 128x256:s4:c2:g8:cl2 lost to the twin on all five shapes of N 2,048 (64 wide tiles for 132 SMs) and won on
# all nine of N >= 6,144 (1.07-1.19). Candidate: the wide tile in the twin's place where its tiles fill the
# card at least once, ceil(M/128) x ceil(N/256) >= SMs. Judged on rows the lead did not come from (256, 512,
# 768): 16 shapes no run has timed (shapes.txt, by pick.py before the run; 8 a dtype), plus 6 controls where
# the candidate keeps the twin (read, not judged).
#
# The method and rule are card-factors-2's (its run.sh and judge.py, unchanged; judge.py beside this splits
# the controls off): OLD the untuned tile (the twin, main's binary) against NEW, FP8 with row scales against
# cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second balanced). Q0: no WRONG or failed
# row, gemmalone's default is OLD on every shape, 8 or more shapes a dtype timed. Q1 NEW over OLD, per dtype:
# at or above on two thirds (rounded up), geometric mean at least 1.02, none below 0.95 -> that dtype's rule
# takes 128x256:s4:c2:g8:cl2 where it fills the card, rows off sectors, on the H100 (defaultTile's
# ppClusterTwin path; 1,024 rows too, the lead's). The judged shapes run first, the dtypes alternating.
# An H100 only (card-factors-2's run.sh stops at once on other cards). About 20 s a shape: DEADLINE=520,
# timeout 590 s. Build: main's gemmalone (bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move
# .gpu/wide/gm.txz to .gpu/bal/gm.txz); carry [".gpu/bal"].
set -u
d=$(dirname "$0")
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/ofill#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/ofill.tgz -C /tmp ofill#" $src/run.sh > /tmp/ofill.sh
grep -q '^R=/tmp/ofill$' /tmp/ofill.sh && grep -q 'ofill.tgz -C /tmp ofill$' /tmp/ofill.sh || { echo "card-factors-2's run.sh changed: not run"; exit 1; }
DEADLINE=${DEADLINE:-520} bash /tmp/ofill.sh
