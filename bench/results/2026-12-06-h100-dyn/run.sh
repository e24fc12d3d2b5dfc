#!/bin/bash
# Ran 2026-12-06 13:00 UTC on 1 x H100 (../2026-12-06-h100-dyn.md): correct, no faster; Q1 and Q2 not met.
# PLANNED (written 2026-12-06 11:35 UTC, before any run; rename the folder to the day and card once it has
# run). Issue 56, docs/results-gemm.md item 9: does a dynamic tile schedule lift our FP8 tiles at many
# waves? ncu (2026-12-06-h100-fp8-method.md) found the static walk's SMs finishing up to 34% (g4) and 51%
# (g8) apart within a launch for the 128x128 ping-pong tile, which has cuBLASLt FP8's own tile size, stages,
# threads, registers and shared memory; cuBLASLt's spread 3-4%. dyn.patch (the `:dyn` tiles) hands tiles out
# from a counter instead (hopper_tile.cuh's DYN_SCHED; in clusters the first CTA takes each cluster tile for
# both; compiled with NVRTC 12.4 here, no spills, never run). protocol_model.py beside this checks the queue's
# protocol (parities, counts, the end marker, the counter's reset) over random interleavings of a model of
# the kernel's threads: 3,000 launches, none deadlocked or wrong; it catches a reader left out of the empty
# barrier's count, a parity off by one and a reset that never happens.
#
# One call, about 480 s, either card (the card goes in machine.txt; the rule compares tiles in one process):
#   0. a smoke test of the dynamic tiles (below; under a minute), which ends the call if they fail;
#   1. the timing (gemmalone-56.sh, about 350 s, cut at 470 s from the call's start): FP8 row scales, lean (cuBLASLt FP8 alone around each tile),
#      1 s windows, two rounds a shape (the second in reverse tile order), seven shapes of many waves, each
#      below 1.00 in the sustained set or profiled before, and six tiles: the rule's (default; 128x256:s4:c2:g8:cl2
#      at six of the seven), the 128x128 ping-pong tile static and dynamic, the 128x256 cooperative tile (no
#      cluster) static and dynamic, and the rule's clustered 128x256 tile dynamic.
#      gemmalone checks every dynamic tile twice before timing (the second launch from the counter the first
#      left) and again after the timed launches.
#   2. where time is left (70 s or more of 540), ncu at 8192^3 of the same five non-default tiles: SMs' active cycles (min, max in the
#      raw pages), DRAM bytes.
# The rule (judge.py beside this, standard library; written before the run):
#   Q0 correct: no WRONG row for a dynamic tile (else nothing else counts, and the kernel is at fault).
#   Q1 the lead: 128x128:s6:c2:g4:pp:dyn over the static 128x128:s6:c2:g4:pp (ratio to cuBLASLt FP8, the
#      mean of the rounds), geometric mean over the shapes at least 1.05: the schedule is what the
#      ping-pong tile lost to.
#   Q2 a candidate: the best dynamic tile of each shape at least the rule's default on 5 of 7 shapes and
#      at least 1.02 over it in geometric mean: then a held-out run (new shapes, bf16 too, 2 s windows)
#      comes next, before any default moves (a default that moves changes kernel versions).
#   Also reported, no rule: 128x256:s4:c2:g8:dyn over its static twin, and 128x256:s4:c2:g8:cl2:dyn over
#   128x256:s4:c2:g8:cl2 where that is the default.
# If Q2 says "a candidate", heldout.sh (beside this, written before this ran) is the next call, with the
# tile judge.py names.
# Build: bash bench/results/2026-12-06-h100-dyn/build.sh; carry [".gpu/dyn"]; timeout 560 s.
set -u
d=$(dirname "$0")
mkdir -p /tmp/gm && tar xJf .gpu/dyn/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/dyn; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
cat $R/machine.txt
tiles="128x128:s6:c2:g4:pp,128x128:s6:c2:g4:pp:dyn,128x256:s4:c2:g8,128x256:s4:c2:g8:dyn,128x256:s4:c2:g8:cl2:dyn"
# 0. A smoke test first (under a minute): the dynamic tiles never ran, and a hang would cost every shape its
# PER_SHAPE. Three shapes (few tiles, where some CTAs' first fetch finds none; short loops; a square), both
# dtypes, each checked twice and after 20 timed launches. Any failure ends the call here.
dyn="128x128:s6:c2:g4:pp:dyn,128x256:s4:c2:g8:dyn,128x256:s4:c2:g8:cl2:dyn,64x64:s10:c2:g8:pp:dyn"
for dt in e4m3_row bf16; do
	ref=; [ $dt = e4m3_row ] && ref=-fp8-ref-only
	timeout 60 $BIN/gemmalone -dtype $dt -shapes 256x1280x1024,8192x8192x1024,2048x2048x2048 -tiles "$dyn" -iters 20 -warmup 2 \
		-bt=false $ref > $R/smoke-$dt.csv 2> $R/smoke-$dt.err
	rc=$?
	echo "smoke $dt rc $rc at $SECONDS: $(grep -c ',fused,' $R/smoke-$dt.csv) rows, $(grep -c WRONG $R/smoke-$dt.csv) wrong"
	grep ',fused,' $R/smoke-$dt.csv | cut -d, -f1,3,5,6,8 | cut -c1-120
	if [ $rc != 0 ] || grep -q WRONG $R/smoke-$dt.csv; then
		tail -5 $R/smoke-$dt.err
		echo "the dynamic tiles failed their smoke test: no timing"
		tar czf $OUT/dyn.tgz -C /tmp dyn
		exit 0
	fi
done
OUT=$R/t SET=small SHAPES="8192x8192x8192 4096x14336x4096 4096x8192x4096 12288x5120x5120 16384x8192x3584 16384x5120x8192 1024x14336x8192" \
	DTYPES=e4m3_row TILES="default,$tiles" SUSTAIN=1s LONG_SUSTAIN=1s PER_SHAPE=60 ROUNDS=2 DEADLINE=$((470 - SECONDS)) FP8_REF_ONLY=1 \
	bash bench/gemmalone-56.sh > $R/t.log 2>&1
echo "timing rc $? at $SECONDS"
python3 "$d/judge.py" $R/t/gemmalone-56/gemmalone-e4m3_row.csv | tee $R/verdict.md
left=$((540 - SECONDS))
if [ "$left" -gt 70 ]; then
	OUT=$R/ncu SHAPES="8192x8192x8192" DTYPE=e4m3_row TILES="$tiles" PER_SHAPE=$((left - 20)) DEADLINE=$((left - 20)) \
		bash bench/ncu-gemm.sh > $R/ncu.log 2>&1
	echo "ncu rc $? at $SECONDS"; sed -n '5,12p' $R/ncu/ncu-gemm/table.md
else
	echo "ncu not run: $left s left"
fi
tar czf $OUT/dyn.tgz -C /tmp dyn
