#!/bin/bash
# Written 2026-12-06 02:50 UTC, after run.sh's run on 1 x H100 (88 of 129 at or above cuBLASLt, median
# 1.020, against call C's 58 of 129 on 1 x H200): call C's own build (90f1af8: bin/gemmalone and its
# bench/gemmalone-56.sh) on the same set, card kind and method, so the two counts compare on one card.
# The bundle: .gpu/setold/gm.txz (build-old.sh); carry [".gpu/setold"].
set -u
mkdir -p /tmp/gmo && tar xJf .gpu/setold/gm.txz -C /tmp/gmo
cp /tmp/gmo/gemmalone-56-old.sh bench/ # beside gemmalone_table.py, which it calls
export BIN=/tmp/gmo/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/setold; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $R/machine.txt
SET=full SHARD=1/1 DTYPES=bf16 TILES=default SUSTAIN=0.2s LONG_SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=540 OUT=$R/set \
	bash bench/gemmalone-56-old.sh > $R/set.log 2>&1
echo "gemmalone-56 (90f1af8) rc $? at $SECONDS"; tail -n 3 $R/set.log
f=$(ls $R/set/*/gemmalone-bf16.csv | head -1)
grep ',fused,' $f | awk -F, '{split($8,a," "); n++; if (a[1] >= 1.0) up++; if (a[1] >= 1.05) hi++; print a[1]}
	END {print "shapes", n, "at or above 1.00:", up + 0, "at 1.05:", hi + 0 > "/dev/stderr"}' | sort -n |
	awk '{v[NR] = $1} END {print "median", v[int((NR + 1) / 2)]}'
tar czf $OUT/setold.tgz -C /tmp setold
