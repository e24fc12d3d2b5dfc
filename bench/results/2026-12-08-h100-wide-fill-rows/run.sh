#!/bin/bash
# PLANNED (written 2026-12-07 23:10-23:14 UTC, committed in 7b42a8a, before any run; rename the folder to the day and card once it has run).
# Issue 56, the H100's untuned rule at 256-512 rows whose rows start off 128-byte lines (off 32-byte sectors or
# on them), where it keeps the ping-pong tile 128x128:s6:c2:g4:pp. Read after two runs of 2026-12-07 on 1 x H100
# (2026-12-07-h100-offsector-3rows.md, held out, failed its rule; 2026-12-07-h100-offline-rows-screen.md, a
# screen): 128x224:s5:c2:g16 was ahead of the ping-pong tile on 18 of 19 shapes where its tiles fill the card,
# ceil(M/128) x ceil(N/224) >= 132 (1.05-1.23; one 0.993), and behind on 7 of 10 where they do not (0.72-0.87;
# the others 1.02-1.04). Candidate: 128x224:s5:c2:g16 in the ping-pong tile's place at 256-512 rows whose rows
# start off 128-byte lines, where its tiles fill the card (pick.fills), on the H100. Judged on rows no run has
# timed, four row blocks (400-496 rows; at those rows the rule picks the ping-pong tile at N 3,072, 4,096, 11,264
# and 12,288 only): 16 shapes (shapes.txt, by pick.py before the run; 8 a dtype, 4 off sectors and 4 on sectors
# off lines, all filling the card), plus 4 controls where the candidate keeps the ping-pong tile (read, not
# judged).
#
# The method and rule are card-factors-2's, as offsector-fill ran them (card-factors-2's run.sh, unchanged;
# judge.py beside this is offsector-fill's with this plan's threshold): OLD the untuned tile (main's binary)
# against NEW, FP8 with row scales against cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second
# balanced). Q0: no WRONG or failed row, gemmalone's default is OLD on every shape, 8 or more shapes a dtype
# timed. Q1 NEW over OLD, per dtype, on the judged shapes: at or above on two thirds (rounded up), geometric mean
# at least 1.02, none below 0.95 -> that dtype's H100 rule takes 128x224:s5:c2:g16 where it picks the ping-pong
# tile at 256-512 rows off 128-byte lines and pick.fills holds. The judged shapes run first, the dtypes
# alternating. An H100 only (card-factors-2's run.sh stops at once on other cards). About 20 s a shape (20
# shapes): DEADLINE=520, timeout 590 s. Build: main's gemmalone (bash
# bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz to .gpu/bal/gm.txz); carry
# [".gpu/bal"]. Command: DEADLINE=$((540-SECONDS)) bash bench/results/PLANNED-wide-fill-rows/run.sh
set -u
d=$(dirname "$0")
src=bench/results/2026-12-06-h100-card-factors-2
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/cf2\$#R=/tmp/wfill#" \
	-e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/wfill.tgz -C /tmp wfill#" $src/run.sh > /tmp/wfill.sh
grep -q '^R=/tmp/wfill$' /tmp/wfill.sh && grep -q 'wfill.tgz -C /tmp wfill$' /tmp/wfill.sh || { echo "card-factors-2's run.sh changed: not run"; exit 1; }
DEADLINE=${DEADLINE:-520} bash /tmp/wfill.sh
