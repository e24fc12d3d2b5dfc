#!/bin/bash
# PLANNED (written 2026-12-06 09:55 UTC, before any run; rename the folder to the day and card once its
# shards are in). Issue 56's bars counted in sustained windows, as the bar asks: the untuned tile on the
# whole set (129 shapes), 2 s windows (the first third untimed) for every shape, two rounds a shape, the
# second balanced (BALANCED=1: the tile timed around the reference), FP8 against cuBLASLt FP8 alone (lean).
# Why: in 0.2 s windows the FP8 counts overstated our kernel on 1 x H100 (2026-12-06-h100-fp8-window.md:
# 7 of 16 shapes at or above in 2 s windows against 13), and the 0.2 s rounds differ by up to 10.5%.
# Cost: about 18 s a shape (call 6 of that page: 141 s for 8 shapes, two rounds), so a dtype is five
# shards of about 26 shapes, one call each (SHARD=1/5 .. 5/5), about 470 s a call; a session's 30 minutes
# of device time hold three. The shards of one card add up across sessions (the table reads every CSV:
# python3 bench/gemmalone_table.py DIR/*/gemmalone-*.csv). Order: e4m3_row, then bf16, then e4m3.
# A shard's figures count only beside its card's name (machine.txt); H100 and H200 shards never mix.
#   DT=e4m3_row SHARD=1/5 bash bench/results/PLANNED-sustained/run.sh
# Bundle: bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz to
# .gpu/bal/gm.txz (gemmalone with -kernel-outside, main from 5e690ed on; with -survey-sustain, which bf16 and
# e4m3 need, from 00a632f on); carry [".gpu/bal"]; timeout 560 s.
# DONE on 1 x H100, every dtype whole: e4m3_row, all 129 shapes (2026-12-06-h100-sustained-row.md;
# 10:59-11:26, 13:05-13:19 and 14:20); bf16, all 129 (2026-12-06-h100-sustained-bf16.md; 13:16,
# 14:20-14:38, 17:28 and 19:27-19:33, the last with the H100's own tile factors, whose two moved picks
# are counted with them, and 2026-12-07 07:05-07:11 and 09:13); e4m3, all 129
# (2026-12-06-h100-sustained-e4m3.md, 17:34, 19:33, and 2026-12-07 00:23-00:30, 02:56-03:00 and
# 09:14-09:34, with the FP8 card factor's two moved picks, 1024x14336x8192 and 1024x29568x8192, re-timed
# in e4m3 and e4m3_row). Owed on an H100: nothing but shapes whose pick moves later (2026-12-07 09:55: FP8
# 256x8192x3696 takes the clustered twin), re-timed with SHAPES=. Counts stay in
# 2 s windows: 1 s windows read FP8 row scales differently (2026-12-06-h100-window-1s.md).
# (SHAPES="MxNxK ..." passes through to gemmalone-56.sh and takes the place of the shard's list; a second
# call of a SHARD writes the first one's folder and tgz names, so rename its tgz before it comes back.) On
# an H200 every shard is still owed.
# bf16 and e4m3 (added 2026-12-06 11:50, before any of their shards ran): cuBLASLt's four algorithms are
# surveyed in 0.5 s windows (SURVEY, gemmalone -survey-sustain) and only the pick is timed in 2 s windows
# around the tile, the ratio's; about 19 s a shape for two rounds, so they run in six shards (SHARD=1/6 ..
# 6/6, about 410 s each). cuBLASLt FP8 with row scales has one algorithm to survey: e4m3_row unchanged.
set -u
DT=${DT:-e4m3_row}
SHARD=${SHARD:-1/5}
tag=$DT-$(echo "$SHARD" | tr / o)
R=/tmp/sus-$tag
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
# The method is the maintained part's since 2026-12-06 13:20 (bench/gemmalone-56.sh SET=bar, `make
# bench-gpu PARTS=gemmalone-bar`): the same flags this script passed before, per dtype.
SET=bar SHARD=$SHARD DTYPES=$DT DEADLINE=${DEADLINE:-520} OUT=$R/set bash bench/gemmalone-56.sh > $R/set.log 2>&1
echo "gemmalone-56 $DT $SHARD rc $? at $SECONDS"; grep -E 'deadline|rc ' $R/set.log | head -5
tail -12 $R/set/gemmalone-56-*/table.md 2>/dev/null
tar czf $OUT/sus-$tag.tgz -C /tmp sus-$tag
