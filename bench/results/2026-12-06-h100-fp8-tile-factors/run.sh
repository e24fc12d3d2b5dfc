#!/bin/bash
# PLANNED (written 2026-12-06 17:50 UTC, the bf16 step 18:10, before any run; rename the folder to the day
# and card once it has run). Issue 56: the untuned rule's tile factors in FP8, and the 160-column tiles'
# in bf16. tileEfficiency was measured in bf16 on 1 x H200 (2026-12-03; the 160-column tiles on 8 shapes)
# and FP8 products use it unchanged; the H100's own bf16 factors (2026-12-06-h100-card-factors.md, on
# main) cover 128x224 and 128x128:pp only, and apply to bf16 and f16 only, because no FP8 factor had
# been measured on any card. On the H100 the FP8 ping-pong tile loses where the rule takes it at wide N
# (1024 x 29568 x 8192: 0.945 with row scales, 0.904 with tensor scales, in 2 s windows).
#
# One call, about 480 s, either card (the card goes in machine.txt; on an H200 it measures that card's
# factors). The 23 shapes of 2026-12-06-h100-tile-factors.md (every tile fills 8 waves or more), one
# round of 0.2 s windows (that page's method), the tiles 128x256:s4:c2:g8:cl2 (the reference),
# 128x224:s5:c2:g16, 128x128:s6:c2:g4:pp, 256x160:s4:c2:g8 and 128x160:s6:c2:g8 (the factors' tiles),
# and 128x256:s4:c2:g8 without clusters (added 18:12, before any run: the rule weighs it as 128x256:cl2,
# factor 1, below 4,096 rows, and at 1024 x 18432 x 4096 on the H100 it ran 7% behind the ping-pong tile
# the two nearly tie on: 2026-12-06-h100-defaults-reading.md):
#   1. FP8 row scales, lean (ratio to cuBLASLt FP8 alone), until 250 s;
#   2. bf16, until 520 s: the 160-column tiles' factors, the H200's on every card so far, and a second
#      measurement of the H100's two (a check of the tile-factors page's round).
# Reading (judge.py beside this, standard library; fixed before the run), per dtype: each tile's factor,
# the geometric mean of its ratio over 128x256:cl2's on the shapes where all six ran (12 or more, else
# no reading), beside the rule's factor for this card and dtype as on main when this was written.
# A tile 0.03 or more off the rule's makes those factors worth a patch (FP8 factors; or the bf16 factor
# of a tile the card has none of), built off main and timed held out at shapes where its picks change,
# as card-factors was. Within 0.03 on every tile: the rule keeps its factors. For a tile the card already
# has its own bf16 factor for, a second measurement is reported, not judged. A measurement, no rule
# change from this run alone.
# Build: main's gemmalone, .gpu/bal/gm.txz (PLANNED-sustained/run.sh's header); carry [".gpu/bal"];
# timeout 580 s.
set -u
d=$(dirname "$0")
R=/tmp/ftf
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
MANY="16384x3584x8192 4096x14336x4096 8192x8192x8192 12288x5120x5120 1024x57344x8192 4096x10240x8192 4096x14336x8192
4096x28672x8192 4096x57344x8192 16384x2560x8192 16384x5120x8192 16384x7168x8192 16384x8192x1024 16384x8192x2048
16384x8192x3584 16384x8192x4096 16384x8192x7168 16384x8192x8192 16384x8192x14336 16384x8192x28672 16384x10240x8192
16384x14336x8192 16384x28672x8192"
tiles="128x256:s4:c2:g8:cl2,128x224:s5:c2:g16,128x128:s6:c2:g4:pp,256x160:s4:c2:g8,128x160:s6:c2:g8,128x256:s4:c2:g8"
OUT=$R/fp8 SET=small SHAPES="$(echo $MANY)" DTYPES=e4m3_row SUSTAIN=0.2s LONG_SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=30 \
	FP8_REF_ONLY=1 TILES="$tiles" DEADLINE=$((250 - SECONDS)) bash bench/gemmalone-56.sh > $R/fp8.log 2>&1
echo "fp8 rc $? at $SECONDS"; grep -E 'deadline|rc ' $R/fp8.log | head -3
OUT=$R/bf16 SET=small SHAPES="$(echo $MANY)" DTYPES=bf16 SUSTAIN=0.2s LONG_SUSTAIN=0.2s ROUNDS=1 PER_SHAPE=30 \
	TILES="$tiles" DEADLINE=$((520 - SECONDS)) bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
echo "bf16 rc $? at $SECONDS"; grep -E 'deadline|rc ' $R/bf16.log | head -3
python3 "$d/judge.py" $R/machine.txt $R/fp8/gemmalone-56/gemmalone-e4m3_row.csv $R/bf16/gemmalone-56/gemmalone-bf16.csv |
	tee $R/verdict.md
tar czf $OUT/ftf.tgz -C /tmp ftf
