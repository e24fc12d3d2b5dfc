#!/bin/bash
# Ran as planned on 2026-12-07, 12:59-13:05 UTC, on 1 x NVIDIA H100 80GB HBM3 (driver 580.159.04, 700 W):
#   cp .gpu/cl4/gm.txz .gpu/bal/gm.txz; DEADLINE=$((550-SECONDS)) bash bench/results/PLANNED-cluster4/run.sh
# (after two 20 s re-times in the same call; the bundle from build.sh at e3df5ac, carried as .gpu/cl4).
# Results: cl4.tgz beside this, read by screen.py; the page is ../2026-12-07-h100-cluster4.md.
# PLANNED (written 2026-12-07 09:58 UTC, before any run). Issue 56: clusters of four CTAs along M (:cl4,
# each CTA loading a quarter of B and multicasting it to the four), written on 2026-12-07 as cl4.patch (beside this: the kernel was already parametric in
# CLUSTER_M, so the patch opens the #if gate and Tile.Check, with whole 8-row swizzle atoms a share) and
# never run on a GPU. A patch, not on main: it changes the kernel source, so main's kernel versions (and
# every tuned GEMM entry) would go stale for tiles no run has shown correct. Why: where A's and B's rows start
# off 32-byte sectors, L2 tag requests hold our tile (2026-12-07-h100-ncu-offsector.md) and the clustered
# twin of two CTAs gained 1.11-1.31 by halving B's requests (2026-12-07-h100-offsector-cl2.md), yet it
# stays at 0.74-0.99 of cuBLASLt, which runs clusters of 4 x 2 there. A cluster of four quarters them.
#
# A screen, not a rule: nothing goes to main from this run. Any card (machine.txt says which; a screen on
# one card says nothing of the other). One call, about 400 s: the 12 shapes of shapes.txt (FP8 6, bf16 6;
# off sectors: FP8 K = 3,696 and 2,064, bf16 K = 4,136, 7,192 and 3,704; on sectors: the rest), each with
# five tiles: the untuned one ("default"), 128x128 and 128x256 in clusters of two and of four; FP8 with
# row scales against cuBLASLt FP8 alone (lean), 1 s windows, two rounds a shape (the second balanced).
# Questions, fixed before the run (read from gemmalone-56's tables and the CSVs):
#   Q0 correct: every :cl4 row passes gemmalone's float64 check with a poisoned output (no WRONG, no
#      failed launch) on every shape timed. If not, the kernel's clusters of four are wrong: fix before
#      anything else, and nothing below counts.
#   Q1 per dtype and off/on sectors: the geometric mean over shapes of each :cl4 tile over its :cl2 twin,
#      and on how many shapes a :cl4 tile is the best of the five by 2% or more.
#   Next, by the answer: a group where a :cl4 tile leads its twin by 3% or more (geometric mean) gets a
#   held-out plan on shapes of its own with card-factors-2's rule; otherwise clusters of four are closed
#   for the untuned rule (the tiles stay unsearched).
# If Q0 and Q1 give a group worth a held-out plan, the patch goes to main with that plan's result (its
# kernel version bump said in version_test.go), not before.
# Build: bash bench/results/PLANNED-cluster4/build.sh (main with cl4.patch applied, compile-checked; writes
# .gpu/bal/gm.txz: rebuild from main afterwards for other runs); carry [".gpu/bal"]; timeout 560 s.
set -u
d=$(dirname "$0")
R=/tmp/cl4
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
tiles=default,128x128:s6:c2:g4:cl2,128x128:s6:c2:g4:cl4,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:cl4
i=0
while read -r dtype shape; do
	i=$((i + 1))
	left=$((${DEADLINE:-520} - SECONDS))
	[ "$left" -gt 20 ] || { echo "deadline: $dtype $shape and later not run"; break; }
	if [ "$dtype" = e4m3 ]; then dt=e4m3_row lean=1; else dt=$dtype lean=; fi
	OUT=$R/t$i SET=small SHAPES="$shape" DTYPES=$dt FP8_REF_ONLY=$lean TILES="$tiles" SUSTAIN=1s \
		LONG_SUSTAIN=1s PER_SHAPE=60 ROUNDS=2 BALANCED=1 DEADLINE=$left bash bench/gemmalone-56.sh > $R/t$i.log 2>&1
	echo "$dt $shape: rc $? at $SECONDS"
	grep -h "^$shape," $R/t$i/gemmalone-56/gemmalone-*.csv 2>/dev/null | grep -E ",fused,.*cl4" | grep -c WRONG | sed "s/^/  cl4 rows WRONG: /"
done < "$d/shapes.txt"
# shellcheck disable=SC2046 # one CSV a word; none where nothing ran
python3 bench/gemmalone_table.py $(ls $R/t*/gemmalone-56/gemmalone-*.csv 2>/dev/null) | tee $R/table.md | grep -E "^\| [0-9]+x" | cut -d'|' -f2-6
tar czf $OUT/cl4.tgz -C /tmp cl4
