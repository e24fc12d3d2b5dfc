#!/bin/bash
# Planned 2026-12-07 20:15 UTC, before any run (as PLANNED-offsector-3rows/); ran 2026-12-07 23:00 on 1 x H100.
# Issue 56, the H100's untuned rule where rows start off 32-byte sectors at three row blocks (257-384 rows): no
# cluster of two fits whole there and the rule keeps the ping-pong tile 128x128:s6:c2:g4:pp. In the screen
# (2026-12-07-h100-offsector-rows-screen.md, at 320 and 384 rows) 128x224:s5:c2:g16 was 1.10-1.17x that tile on
# 8 of 8 shapes. Candidate: 128x224:s5:c2:g16 in the ping-pong tile's place there, on the H100. Judged on rows the
# screen did not time (336, 352, 368): 16 shapes no run has timed (shapes.txt, by pick.py before the run; 8 a
# dtype, alternating).
#
# The method and rule are card-factors-2's (its run.sh and judge.py, unchanged; judge.py beside this only names
# the candidate): OLD the untuned tile (ping-pong, main's binary) against NEW, FP8 with row scales against
# cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second balanced). Q0: no WRONG or failed row,
# gemmalone's default is OLD on every shape, 8 or more shapes a dtype timed. Q1 NEW over OLD, per dtype: at or
# above on two thirds (rounded up), geometric mean at least 1.02, none below 0.95 -> that dtype's rule takes
# 128x224:s5:c2:g16 where the H100's rule picks the ping-pong tile with rows off sectors at 257-384 rows (320 and
# 384 too, the screen's rows). An H100 only (card-factors-2's run.sh stops at once on other cards). About 20 s
# a shape: DEADLINE=520, timeout 590 s. Build: main's gemmalone (bash
# bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz to .gpu/bal/gm.txz); carry
# [".gpu/bal"].
set -u
d=$(dirname "$0")
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/o3rows#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/o3rows.tgz -C /tmp o3rows#" $src/run.sh > /tmp/o3rows.sh
grep -q '^R=/tmp/o3rows$' /tmp/o3rows.sh && grep -q 'o3rows.tgz -C /tmp o3rows$' /tmp/o3rows.sh || { echo "card-factors-2's run.sh changed: not run"; exit 1; }
DEADLINE=${DEADLINE:-520} bash /tmp/o3rows.sh
