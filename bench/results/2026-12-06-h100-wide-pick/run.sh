#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-06 05:37 UTC (two calls on one warm machine: rounds 1-2, then 3-4):
# 2026-12-06-h100-wide-pick.md. Not kept on this card (5 of 7, worst 0.951); still owed on an H200.
# PLANNED (written 2026-12-06 04:55 UTC, before any run; rename the folder to the day and card it runs on).
# Issue 56: is 128x224:s5:c2:g16 the better untuned pick than 128x128:s6:c2:g4:pp at 1,024-2,048 rows
# where K >= 8,192 and N >= 13,824? Seen on 1 x H100 (2026-12-06-h100-pp-group.md): 1.03-1.17x the rule's
# tile at all five such shapes, 0.64-0.99x at K of 4,096-5,120 or N <= 9,216. Here seven shapes no run
# timed, each one the rule gives 128x128:pp with K of 8,192-14,336 and N of 15,360-29,568, both tiles,
# two rounds in opposite orders, 0.2 s windows, each between cuBLASLt's best before and after it.
# Keep rule, fixed before the run, by the mean of the two rounds' ratios: the candidate holds on this card
# if 128x224:s5:c2:g16 is at least as fast as the rule's tile on 6 of the 7, their geometric mean is 3% or
# more ahead, and no shape is more than 1.5% behind. The rule changes only once it also holds on an H200
# (the card), which this script does not decide; a result on one card is written down as such.
#   bash bench/results/PLANNED-wide-pick/build.sh (here: .gpu/wide/gm.txz); carry [".gpu/wide"].
set -u
mkdir -p /tmp/gm && tar xJf .gpu/wide/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/wide; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
HELD="1024x18432x8192 1024x26624x8192 1024x22528x10240 1024x29568x14336 1536x15360x12288 1536x26624x8192 1536x29568x10240"
OUT=$R/set SET=small SHAPES="$HELD" DTYPES=bf16 TILES="128x128:s6:c2:g4:pp,128x224:s5:c2:g16" SUSTAIN=0.2s ROUNDS=2 \
	PER_SHAPE=60 DEADLINE=300 bash bench/gemmalone-56.sh > $R/set.log 2>&1
echo "gemmalone-56 rc $? at $SECONDS"
grep -h ',fused,' $R/set/*/gemmalone-bf16.csv | awk -F, '{split($8,a," "); k=$1" "$3; s[k]+=a[1]; c[k]++; r[k]=r[k]" "a[1]; t[k]=$7}
	END {for (k in s) printf "%s %.3f%s (%s TF)\n", k, s[k]/c[k], r[k], t[k]}' | sort
tar czf $OUT/wide.tgz -C /tmp wide
