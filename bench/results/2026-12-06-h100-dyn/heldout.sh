#!/bin/bash
# Not run: run.sh's rule found no candidate (../2026-12-06-h100-dyn.md).
# PLANNED (written 2026-12-06 11:45 UTC, before run.sh ran): the held-out check that run.sh's rule asks for
# before a dynamic tile may move any default. Run only if run.sh's Q2 said "a candidate", with DYN_TILE set
# to the tile judge.py names ("the dynamic tile for heldout.sh"). Shapes none of run.sh's: eight FP8
# row-scale shapes (three outside issue 56's set) in 2 s windows, two rounds, the second balanced
# (-kernel-outside), lean; then four bf16 shapes (one outside the set) in 1 s windows, two rounds.
# Tiles: each shape's untuned tile (default) and DYN_TILE.
# The rule (judged by hand from table.md's rows, written before the run): DYN_TILE is kept as a candidate
# for the default rule only if, over the eight FP8 shapes, it is at or above the default on 6 and at least
# 1.02 over it in geometric mean, and over the four bf16 shapes no worse than 0.99 in geometric mean.
# Even then, moving a default changes kernel versions: the patch goes to main with its tests and a note.
# About 450 s; build and carry as run.sh's (.gpu/dyn); timeout 560 s.
#   DYN_TILE=128x256:s4:c2:g8:cl2:dyn bash bench/results/2026-12-06-h100-dyn/heldout.sh
set -u
: "${DYN_TILE:?set DYN_TILE to the tile judge.py names}"
mkdir -p /tmp/gm && tar xJf .gpu/dyn/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/dynho; rm -rf $R; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
cat $R/machine.txt
OUT=$R/fp8 SET=small SHAPES="8192x3584x8192 16384x2560x8192 4096x28672x8192 16384x7168x8192 4096x8192x7168 6144x8192x8192 2048x14336x8192 12288x8192x4096" \
	DTYPES=e4m3_row TILES="default,$DYN_TILE" SUSTAIN=2s LONG_SUSTAIN=2s PER_SHAPE=60 ROUNDS=2 BALANCED=1 DEADLINE=340 FP8_REF_ONLY=1 \
	bash bench/gemmalone-56.sh > $R/fp8.log 2>&1
echo "fp8 rc $? at $SECONDS"; grep ',fused,' $R/fp8/gemmalone-56/gemmalone-e4m3_row.csv | cut -d, -f1,3,5,6,11 | cut -c1-120
OUT=$R/bf16 SET=small SHAPES="8192x8192x8192 4096x14336x4096 16384x8192x3584 6144x8192x8192" \
	DTYPES=bf16 TILES="default,$DYN_TILE" SUSTAIN=1s LONG_SUSTAIN=1s PER_SHAPE=40 ROUNDS=2 DEADLINE=$((520 - SECONDS)) \
	bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
echo "bf16 rc $? at $SECONDS"; grep ',fused,' $R/bf16/gemmalone-56/gemmalone-bf16.csv | cut -d, -f1,3,5,6,8 | cut -c1-120
tar czf $OUT/dynho.tgz -C /tmp dynho
