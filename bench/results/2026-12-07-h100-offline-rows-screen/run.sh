#!/bin/bash
# Planned 2026-12-07 20:50 UTC, before any run (as PLANNED-offline-rows-screen/); ran 2026-12-07 23:05 on 1 x H100.
# Issue 56, the H100's untuned rule where rows start on 32-byte sectors but off 128-byte lines: it keeps the
# ping-pong tile 128x128:s6:c2:g4:pp there at 256-512 rows (the clustered twin lost there:
# 2026-12-07-h100-offline-cl2.md), and our L2 tag requests rise to 66-69% of peak, the busiest unit
# (2026-12-07-h100-ncu-offline-bf16.md); issue 56's 256 x 8192 x 3696 and x 7392 bf16 run 0.92 of cuBLASLt. Off
# sectors, at 320 and 384 rows, a wider unclustered tile beat the ping-pong one by 10-22% on 8 of 8 shapes
# (2026-12-07-h100-offsector-rows-screen.md): a wider tile requests fewer rows of A and B per output. Does it
# here too?
#
# A screen, not a rule: nothing goes to main from this run. An H100 (elsewhere it stops at once). One call: the
# 14 shapes of shapes.txt (pick.py, before the run: two a dtype and M at 256, 384 and 512 rows, then two of issue
# 56's set read only), each with four tiles: the untuned one ("default", the ping-pong tile), 128x256:s4:c2:g8,
# 128x224:s5:c2:g16, 128x160:s6:c2:g8; FP8 with row scales against cuBLASLt FP8 alone (lean), 1 s windows, two
# rounds a shape (the second balanced). Questions, fixed before the run (read from gemmalone_table.py's table,
# table.md):
#   Q0 correct: no WRONG or failed row.
#   Q1 per dtype and M: on how many shapes a tile other than the default is best by 3% or more, and which.
#   Next: a tile best by 3% on most shapes of a (dtype, M) group, or across groups, gets a held-out plan on
#   shapes of its own with card-factors-2's rule; otherwise these rows keep the ping-pong tile.
# The screen's script is offsector-rows-screen's (its run.sh, unchanged but for its names and a deadline of 520 s).
# Build: main's gemmalone (bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz
# to .gpu/bal/gm.txz); carry [".gpu/bal"]; DEADLINE=520, timeout 590 s (about 33 s a shape; a call cut short
# covers the groups first).
set -u
d=$(dirname "$0")
src=bench/results/2026-12-07-h100-offsector-rows-screen
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/orows\$#R=/tmp/olines#" -e "s#DEADLINE:-380#DEADLINE:-520#" \
	-e "s#\$OUT/orows.tgz -C /tmp orows\$#\$OUT/olines.tgz -C /tmp olines#" $src/run.sh > /tmp/olines.sh
grep -q '^R=/tmp/olines$' /tmp/olines.sh && grep -q 'olines.tgz -C /tmp olines$' /tmp/olines.sh &&
	grep -q 'DEADLINE:-520' /tmp/olines.sh || { echo "offsector-rows-screen's run.sh changed: not run"; exit 1; }
bash /tmp/olines.sh
