#!/bin/bash
# One dtype's part of run.sh's plan (beside this; plan and rule written 2026-12-06 19:40 UTC, before any
# run), as the FP8 part ran at 22:39 UTC (the command in ../2026-12-06-h100-card-factors-2.md):
#   PART=bf16 DEADLINE=230 bash bench/results/2026-12-06-h100-card-factors-2/run-part.sh
# runs run.sh with its loop reading only PART's lines of shapes.txt (in their order), into /tmp/cf2-PART
# and $OUT/cf2-PART.tgz; the judge still reads the whole shapes.txt (the other part shows "not timed").
# Written 2026-12-06 23:06 UTC for the bf16 part (128x160's factor 0.879); ran 2026-12-07 00:15-00:19 UTC on
# 1 x H100 (PART=bf16 DEADLINE=235): ../2026-12-06-h100-card-factors-2.md, its last section. Carry
# [".gpu/bal"]; about 20 s a shape (10 bf16 shapes).
set -u
d=bench/results/2026-12-06-h100-card-factors-2
PART=${PART:?PART=bf16 or e4m3}
grep "^$PART " $d/shapes.txt > /tmp/cf2-$PART.txt
sed -e "s#^d=\$(dirname \"\$0\")#d=$d#" -e "s#done < \"\$d/shapes.txt\"#done < /tmp/cf2-$PART.txt#" \
	-e "s#^R=/tmp/cf2\$#R=/tmp/cf2-$PART#" -e "s#\$OUT/cf2.tgz -C /tmp cf2\$#\$OUT/cf2-$PART.tgz -C /tmp cf2-$PART#" \
	$d/run.sh > /tmp/cf2-$PART.sh
bash /tmp/cf2-$PART.sh
