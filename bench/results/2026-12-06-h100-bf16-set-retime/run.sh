#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-06 02:44 UTC (327 s): 2026-12-06-h100-bf16-set-retime.md.
# PLANNED (written 2026-12-06 01:50 UTC, before any run; rename the folder to the day and card it runs
# on). Issue 56's first bar, re-counted: the untuned tile (gpu.DefaultTileFor, -tiles default) on the
# whole bf16 set (129 shapes), as call C of 2026-12-04 timed it (58 of 129 at or above cuBLASLt's best,
# 12 at 1.05x, median 0.995: bench/results/2026-12-04-h200-large-tiles.md), with today's rule: the
# wave-width 64-row tiles, evict-first B up to 256 rows, the clustered stream-K tiles. The same method
# as call C: 0.2 s a kernel (long products too: LONG_SUSTAIN=0.2s, as call C had no longer windows),
# one round, each tile between cuBLASLt's best right before and after it. A count, not a keep decision;
# compare it with call C's on the same card kind only (call C: H200; name the card here).
#   bash bench/results/PLANNED-bf16-set-retime/build.sh (here: .gpu/set/gm.txz); carry [".gpu/set"].
# About 400 s (call C: 390 s deadline for the set).
set -u
mkdir -p /tmp/gm && tar xJf .gpu/set/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/set; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
SET=full SHARD=1/1 DTYPES=bf16 TILES=default SUSTAIN=0.2s LONG_SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=${DEADLINE:-540} OUT=$R/set \
	bash bench/gemmalone-56.sh > $R/set.log 2>&1
echo "gemmalone-56 rc $? at $SECONDS"; tail -n 3 $R/set.log
f=$R/set/gemmalone-56-1of1/gemmalone-bf16.csv
grep ',fused,' $f | awk -F, '{split($8,a," "); n++; if (a[1] >= 1.0) up++; if (a[1] >= 1.05) hi++; print a[1]}
	END {print "shapes", n, "at or above 1.00:", up + 0, "at 1.05:", hi + 0 > "/dev/stderr"}' | sort -n |
	awk '{v[NR] = $1} END {print "median", v[int((NR + 1) / 2)]}'
tar czf $OUT/set.tgz -C /tmp set
