#!/bin/bash
# PLANNED (written 2026-12-08 01:30 UTC, before any run; rename the folder to the day and card once it has run).
# Issue 56, the H100's untuned rule at 256-512 rows whose rows start on 32-byte sectors but off 128-byte lines,
# where 128x224 tiles do not fill the card: offLineWide (on main since 2026-12-08, 2026-12-08-h100-wide-fill-rows.md)
# leaves the ping-pong tile 128x128:s6:c2:g4:pp there. In the scan of grid-narrow.txt.gz that scope is 256 rows at
# N 8,192 and 384-512 rows at N 3,072-5,120. Issue 56's 256 x 8192 x 3696 and x 7392 bf16 are in it and run 0.92
# of cuBLASLt in 2 s windows (2026-12-06-h100-sustained-bf16.md), the set's worst at 256 rows; the off-line rows
# screen (2026-12-07-h100-offline-rows-screen.md) timed one shape there: 128x160:s6:c2:g8 1.045 over the ping-pong
# tile, the wide tiles 0.83-0.87. Do narrower or 64-row tiles, which make more or fuller waves at these N, beat it?
#
# A screen, not a rule: nothing goes to main from this run. An H100 (elsewhere it stops at once). One call: the
# 14 shapes of shapes.txt (pick.py, before the run: two a dtype and M at 256, 384 and 512 rows, then issue 56's
# two bf16 shapes in the scope, read only), each with four tiles: the untuned one ("default", the ping-pong
# tile), 128x160:s6:c2:g8, 64x256:s5:c2:g8:pp, 128x192:s5:c2:g8; FP8 with row scales against cuBLASLt FP8 alone
# (lean), 1 s windows, two rounds a shape (the second balanced). Questions, fixed before the run (read from
# gemmalone_table.py's table, table.md):
#   Q0 correct: no WRONG or failed row.
#   Q1 per dtype and M: on how many shapes a tile other than the default is best by 3% or more, and which.
#   Next: a tile best by 3% on most shapes of a (dtype, M) group, or across groups, gets a held-out plan on
#   shapes of its own with card-factors-2's rule; otherwise these rows keep the ping-pong tile.
# The screen's script is offsector-rows-screen's (its run.sh, unchanged but for its names, its tiles and a
# deadline of 520 s), as the off-line rows screen ran it.
# Build: main's gemmalone (bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz
# to .gpu/bal/gm.txz; the kernels are unchanged since 21dcda8, so .gpu/bal of 2026-12-07 serves); carry
# [".gpu/bal"]; DEADLINE=520, timeout 590 s (about 33 s a shape; a call cut short covers the groups first).
# Command: DEADLINE=$((540-SECONDS)) bash bench/results/PLANNED-offline-narrow-screen/run.sh
set -u
d=$(dirname "$0")
src=bench/results/2026-12-07-h100-offsector-rows-screen
tiles=default,128x160:s6:c2:g8,64x256:s5:c2:g8:pp,128x192:s5:c2:g8
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#^R=/tmp/orows\$#R=/tmp/onarrow#" -e "s#DEADLINE:-380#DEADLINE:-520#" \
	-e "s#^tiles=.*#tiles=$tiles#" \
	-e "s#\$OUT/orows.tgz -C /tmp orows\$#\$OUT/onarrow.tgz -C /tmp onarrow#" $src/run.sh > /tmp/onarrow.sh
grep -q '^R=/tmp/onarrow$' /tmp/onarrow.sh && grep -q 'onarrow.tgz -C /tmp onarrow$' /tmp/onarrow.sh &&
	grep -q 'DEADLINE:-520' /tmp/onarrow.sh && grep -qx "tiles=$tiles" /tmp/onarrow.sh ||
	{ echo "offsector-rows-screen's run.sh changed: not run"; exit 1; }
bash /tmp/onarrow.sh
