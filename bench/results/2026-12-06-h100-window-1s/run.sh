#!/bin/bash
# PLANNED (written 2026-12-06 18:13 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56: may the bar's counts run in 1 s windows instead of 2 s, at half the device time?
# The counts' method (bench/gemmalone-56.sh SET=bar) times every product in 2 s windows because 0.2 s
# windows read our kernel 2.7% high (2026-12-06-h100-fp8-window.md). Read afterwards, 30 pairs of the
# same shape and tile from five 1 s calls of the day against the 2 s counts (FP8 row scales, mostly many
# waves) had medians of 0.993-1.001 per call (one pair 0.955, a short loop): no bias seen, but from other
# calls and other sessions. About 110 shape-dtype counts are still owed on an H100 and 387 on an H200, at
# about 19 s a shape in 2 s windows.
#
# One call, about 450 s, an H100 (the 2 s figures it compares with are the H100's): two shards already
# counted in 2 s windows, counted again in 1 s windows by the same method otherwise (BAR_WINDOW=1s):
#   1. bf16 SHARD=1/6 (22 shapes; 2 s: 2026-12-06-h100-sustained-bf16, sus-bf16-1o6*.tgz), until 250 s;
#   2. e4m3_row SHARD=1/5 (26 shapes; 2 s: 2026-12-06-h100-sustained-row, sus-e4m3_row-1o5.tgz), until
#      500 s.
# The rule (judge.py beside this, standard library; written before the run), per dtype, over the shapes
# both windows timed with the same untuned tile (a shape whose pick has moved since is left out):
#   Q0 correct: no WRONG or failed row, and 15 or more shapes compared (else no verdict).
#   Q1 1 s agrees with 2 s: the median of the shapes' 1 s / 2 s ratios within 0.995-1.005; the counts at
#      or above 1.00 and at 1.05 each within one shape of the 2 s counts on the same shapes; and at most
#      a tenth of the shapes (rounded down) more than 2% apart.
#   Both dtypes pass -> the counts' remaining shards run in 1 s windows (BAR_WINDOW's default becomes 1s,
#   the results pages say so); either fails -> they stay 2 s.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"];
# timeout 580 s.
set -u
d=$(dirname "$0")
R=/tmp/w1
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
if ! grep -q H100 $R/machine.txt; then
	echo "not an H100: the 2 s figures to compare with are the H100's"
	tar czf $OUT/w1.tgz -C /tmp w1
	exit 0
fi
BAR_WINDOW=1s SET=bar SHARD=1/6 DTYPES=bf16 DEADLINE=$((250 - SECONDS)) OUT=$R/bf16 bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
echo "bf16 rc $? at $SECONDS"
BAR_WINDOW=1s SET=bar SHARD=1/5 DTYPES=e4m3_row DEADLINE=$((500 - SECONDS)) OUT=$R/row bash bench/gemmalone-56.sh > $R/row.log 2>&1
echo "e4m3_row rc $? at $SECONDS"
python3 "$d/judge.py" bench/results $R | tee $R/verdict.md
tar czf $OUT/w1.tgz -C /tmp w1
