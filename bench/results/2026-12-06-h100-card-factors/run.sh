#!/bin/bash
# Written 2026-12-06 17:05 UTC, before any run (as PLANNED-card-factors/); ran 17:18 UTC on 1 x H100
# (2026-12-06-h100-card-factors.md; the patch passed and is on main since).
# Issue 56: per-card tile factors for the untuned rule (card-factors.patch, off main). On the H100
# the ping-pong 128x128 tile kept 0.896 of 128x256:cl2's rate, not the H200's 0.965
# (2026-12-06-h100-tile-factors.md), and at 512-2,048 rows the H200's factors took it where 128x224 or
# 128x256 ran up to 18% faster (2026-12-06-h100-pp-rows.md). The patch gives bf16 and f16 products that
# are not short loops the H100's factors on a card whose name holds "H100". Its picks include tiles no
# run timed at those shapes (stream-K, 128x160): this call times them, held out.
#
# An H100 only (the patch changes nothing elsewhere; on an H200 the call stops). One call, about 280 s:
# twelve shapes (shapes.txt, chosen by pick.py before the run), bf16, main's untuned tile ("default", the
# H200 factors' pick: OLD) and the patch's pick (NEW), 1 s windows, two rounds a shape (the second
# balanced), each a gemmalone-56.sh run of its own (each shape has its own NEW tile).
# The rule (judge.py beside this, standard library; written before the run):
#   Q0 correct: no WRONG or failed row, and gemmalone's default is OLD on every shape (else the patch's
#      picks were computed against another rule: nothing else counts).
#   Q1 NEW over OLD (the mean of two rounds) on the twelve: at or above on 8 or more, geometric mean
#      at least 1.02, none below 0.95 -> the patch goes to main.
#   Reported: the same per change of pick (pp -> cl2:st, pp -> 128x256, pp -> 128x224, pp -> 128x160).
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"];
# timeout 400 s.
set -u
d=$(dirname "$0")
R=/tmp/cf
. bench/experiments/device-setup.sh - $R
if ! grep -q H100 $R/machine.txt; then
	echo "not an H100: the patch changes no pick here"
	tar czf $OUT/cf.tgz -C /tmp cf
	exit 0
fi
mkdir -p /tmp/gm && tar xJf .gpu/bal/gm.txz -C /tmp/gm
i=0
while read -r shape old new; do
	i=$((i + 1))
	left=$((${DEADLINE:-340} - SECONDS))
	[ "$left" -gt 15 ] || { echo "deadline: $shape and later not run"; break; }
	OUT=$R/t$i SET=small SHAPES="$shape" DTYPES=bf16 TILES="default,$new" SUSTAIN=1s LONG_SUSTAIN=1s PER_SHAPE=40 \
		ROUNDS=2 BALANCED=1 DEADLINE=$left bash bench/gemmalone-56.sh > $R/t$i.log 2>&1
	echo "$shape ($old -> $new): rc $? at $SECONDS"
done < "$d/shapes.txt"
python3 "$d/judge.py" "$d/shapes.txt" $R/t*/gemmalone-56/gemmalone-bf16.csv | tee $R/verdict.md
tar czf $OUT/cf.tgz -C /tmp cf
