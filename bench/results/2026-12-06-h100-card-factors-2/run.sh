#!/bin/bash
# Ran 2026-12-06 22:39-22:43 UTC on 1 x H100, the FP8 lines of shapes.txt alone (the session had 255 s of device time
# left after the machine failed to start twelve times): 2026-12-06-h100-card-factors-2.md.
# PLANNED (written 2026-12-06 19:40 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56: the H100's tile factors measured 0.03 or more off the rule's
# (2026-12-06-h100-fp8-tile-factors.md): in FP8 row scales 128x128:s6:c2:g4:pp keeps 0.889 of
# 128x256:cl2's rate (the rule: the H200's bf16 0.965), in bf16 128x160:s6:c2:g8 0.879 (the rule: 0.956).
# card-factors-2.patch (beside this, off main at d3c5c3a) gives FP8 products (the FP8 map is new) and bf16
# ones on a card whose name holds "H100" those two factors, for loops that are not short. Its picks
# differ from main's on 702 of 11,592 grid shapes (grid.txt) and on 2 of issue 56's 129 in FP8 (1024 x
# 14336 x 8192 and 1024 x 29568 x 8192: pp -> 128x224), none in bf16.
#
# An H100 only (the patch changes no pick elsewhere; on an H200 the call stops). One call, about 520 s:
# 22 shapes (shapes.txt, chosen by pick.py before the run: 12 FP8, 10 bf16, alternating), main's untuned
# tile ("default": OLD) and the patch's pick (NEW), 1 s windows, two rounds a shape (the second balanced),
# each a gemmalone-56.sh run of its own (each shape has its own NEW tile); FP8 with row scales, lean
# (ratio to cuBLASLt FP8 alone), as the factor was measured.
# The rule (judge.py beside this, standard library; written before the run), per dtype, each dtype's
# part of the patch on its own shapes:
#   Q0 correct: no WRONG or failed row, gemmalone's default is OLD on every shape (else the picks were
#      computed against another rule: nothing else counts), and 8 or more shapes timed (else no verdict).
#   Q1 NEW over OLD (the mean of two rounds) on the shapes timed: at or above on two thirds or more
#      (rounded up), geometric mean at least 1.02, none below 0.95 -> that part goes to main.
#   Reported: the same per new pick.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header; main at d3c5c3a has the
# same kernels and rule as b417ea9, the bundle's); carry [".gpu/bal"]; timeout 590 s.
set -u
d=$(dirname "$0")
R=/tmp/cf2
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
if ! grep -q H100 $R/machine.txt; then
	echo "not an H100: the patch changes no pick here"
	tar czf $OUT/cf2.tgz -C /tmp cf2
	exit 0
fi
i=0
while read -r dtype shape old new; do
	i=$((i + 1))
	left=$((${DEADLINE:-550} - SECONDS))
	[ "$left" -gt 15 ] || { echo "deadline: $dtype $shape and later not run"; break; }
	if [ "$dtype" = e4m3 ]; then dt=e4m3_row lean=1; else dt=$dtype lean=; fi
	OUT=$R/t$i SET=small SHAPES="$shape" DTYPES=$dt FP8_REF_ONLY=$lean TILES="default,$new" SUSTAIN=1s \
		LONG_SUSTAIN=1s PER_SHAPE=40 ROUNDS=2 BALANCED=1 DEADLINE=$left bash bench/gemmalone-56.sh > $R/t$i.log 2>&1
	echo "$dt $shape ($old -> $new): rc $? at $SECONDS"
done < "$d/shapes.txt"
# shellcheck disable=SC2046 # one CSV a word; none where nothing ran
python3 "$d/judge.py" "$d/shapes.txt" $(ls $R/t*/gemmalone-56/gemmalone-*.csv 2>/dev/null) | tee $R/verdict.md
tar czf $OUT/cf2.tgz -C /tmp cf2
