#!/bin/bash
# Ran as planned on 1 x H100 (written 2026-12-07 15:50 UTC, before any run): 19:12-19:16 UTC, shapes 1-7 of
# shapes.txt (DEADLINE 230 s; orows.tgz), then on the same warm machine 19:16-19:19 shapes 8-12 (this script
# copied to /tmp with shapes.txt's last five lines and R=/tmp/orows2; orows2.tgz). Issue 56, the H100's untuned rule where rows start off 32-byte sectors, at the rows where no cluster
# of two fits whole (128, 320, 384): the rule keeps the ping-pong tile 128x128:s6:c2:g4:pp there. Off sectors
# L2 tag requests limit our kernel (2026-12-07-h100-ncu-offsector.md) and per 128 x 128 of output and K step
# the ping-pong tile requests 256 rows of A and B, 128x256 192, 128x224 about 199, 128x160 230. Where
# clusters fit, the twin gained 1.21-1.26 and the wide tile more where it fills the card
# (2026-12-07-h100-offsector-fill.md). Does a wider unclustered tile beat the ping-pong one here?
#
# A screen, not a rule: nothing goes to main from this run. An H100 (elsewhere it stops at once). One call,
# about 300 s (a short call covers the first six, one a group): the 12 shapes of shapes.txt (pick.py, before the
# run: two a dtype and M), each with four tiles:
# the untuned one ("default", the ping-pong tile), 128x256:s4:c2:g8, 128x224:s5:c2:g16, 128x160:s6:c2:g8; FP8
# with row scales against cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second balanced).
# Questions, fixed before the run (read from gemmalone_table.py's table, table.md):
#   Q0 correct: no WRONG or failed row.
#   Q1 per dtype and M: on how many shapes a tile other than the default is best by 3% or more, and which.
#   Next: a tile best by 3% on most shapes of a (dtype, M) group, or across groups, gets a held-out plan on
#   shapes of its own with card-factors-2's rule; otherwise these rows keep the ping-pong tile.
# Build: main's gemmalone (bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz
# to .gpu/bal/gm.txz); carry [".gpu/bal"]; DEADLINE=380, timeout 420 s.
set -u
d=$(dirname "$0")
R=/tmp/orows
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
if ! grep -q H100 $R/machine.txt; then
	echo "not an H100: this screen is the H100's"
	exit 0
fi
tiles=default,128x256:s4:c2:g8,128x224:s5:c2:g16,128x160:s6:c2:g8
i=0
while read -r dtype shape; do
	i=$((i + 1))
	left=$((${DEADLINE:-380} - SECONDS))
	[ "$left" -gt 20 ] || { echo "deadline: $dtype $shape and later not run"; break; }
	if [ "$dtype" = e4m3 ]; then dt=e4m3_row lean=1; else dt=$dtype lean=; fi
	OUT=$R/t$i SET=small SHAPES="$shape" DTYPES=$dt FP8_REF_ONLY=$lean TILES="$tiles" SUSTAIN=1s \
		LONG_SUSTAIN=1s PER_SHAPE=50 ROUNDS=2 BALANCED=1 DEADLINE=$left bash bench/gemmalone-56.sh > $R/t$i.log 2>&1
	echo "$dt $shape: rc $? at $SECONDS"
done < "$d/shapes.txt"
# shellcheck disable=SC2046 # one CSV a word; none where nothing ran
python3 bench/gemmalone_table.py $(ls $R/t*/gemmalone-56/gemmalone-*.csv 2>/dev/null) | tee $R/table.md | grep -E "^\| [0-9]+x" | cut -d'|' -f2-10
tar czf $OUT/orows.tgz -C /tmp orows
