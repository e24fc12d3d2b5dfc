#!/bin/bash
# PLANNED (written 2026-12-06 13:40 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56, after 2026-12-06-h100-dyn.md: at 8192^3 the FP8 128x128 ping-pong tile's steady launch
# is balanced (SMs 3% apart) and within 2.7% of cuBLASLt FP8's cycles, yet times at 0.924: its clock,
# from twice cuBLASLt's DRAM bytes (1.33 GB against 0.66). A window model of the static walk says why:
# 264 tiles run at once (two consumers on 132 SMs); with groups of 4 tile rows that is 4 rows x 66
# columns, so each window reads all of B (64 MiB, over L2) again: 15.5 windows, about 1.1 GB. Groups of
# 16 (16 x 16.5) or 32 would read about half. The morning's ncu (2026-12-06-h100-fp8-method.md) found g8
# slower (its SMs 49-51% apart in both launches, DRAM 0.81 of g4's): does a larger group still lose?
#
# One call, about 420 s, either card (the card goes in machine.txt), main's bundle (.gpu/bal, no patch):
#   1. timing (gemmalone-56.sh): FP8 row scales, lean, 1 s windows, two rounds a shape (the second
#      balanced), the seven shapes of 2026-12-06-h100-dyn.md, tiles: the rule's (default) and
#      128x128:s6:c2:gG:pp for G = 4, 8, 16, 32;
#   2. where time is left (70 s or more of 540), ncu at 8192^3 of the four ping-pong tiles, two launches
#      each: DRAM bytes, SMs' spread, tensor pipe, clock.
# The rule (judge.py beside this, standard library; written before the run):
#   Q1 the window: the best of g16 and g32 over g4, geometric mean over the shapes, at least 1.03.
#   Q2 a candidate: that tile at or above the rule's default on 5 of 7 shapes and at least 1.02 over it
#      in geometric mean: then a held-out run (new shapes, bf16 too, 2 s windows) before any rule moves.
# Build: bash bench/results/2026-12-06-h100-wide-pick/build.sh, then move .gpu/wide/gm.txz to
# .gpu/bal/gm.txz (any main from 00a632f on); carry [".gpu/bal"]; timeout 560 s.
set -u
d=$(dirname "$0")
mkdir -p /tmp/gm && tar xJf .gpu/bal/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/ppg; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
cat $R/machine.txt
pp="128x128:s6:c2:g4:pp,128x128:s6:c2:g8:pp,128x128:s6:c2:g16:pp,128x128:s6:c2:g32:pp"
OUT=$R/t SET=small SHAPES="8192x8192x8192 4096x14336x4096 4096x8192x4096 12288x5120x5120 16384x8192x3584 16384x5120x8192 1024x14336x8192" \
	DTYPES=e4m3_row TILES="default,$pp" SUSTAIN=1s LONG_SUSTAIN=1s PER_SHAPE=60 ROUNDS=2 BALANCED=1 DEADLINE=400 FP8_REF_ONLY=1 \
	bash bench/gemmalone-56.sh > $R/t.log 2>&1
echo "timing rc $? at $SECONDS"
python3 "$d/judge.py" $R/t/gemmalone-56/gemmalone-e4m3_row.csv | tee $R/verdict.md
left=$((540 - SECONDS))
if [ "$left" -gt 70 ]; then
	OUT=$R/ncu SHAPES="8192x8192x8192" DTYPE=e4m3_row TILES="$pp" PER_SHAPE=$((left - 20)) DEADLINE=$((left - 20)) \
		bash bench/ncu-gemm.sh > $R/ncu.log 2>&1
	echo "ncu rc $? at $SECONDS"; sed -n '5,12p' $R/ncu/ncu-gemm/table.md
else
	echo "ncu not run: $left s left"
fi
tar czf $OUT/ppg.tgz -C /tmp ppg
