#!/bin/bash
# Call 6 of 2026-12-06-h100-fp8-window.md (09:34, 1 x H100), written right after call 5 and before it ran:
# the same 2 s windows, balanced rounds and lean reference on eight row-scale shapes NOT chosen for a large
# after/before effect (a spread of M), to see how far the set's 0.2 s figures sit from 2 s ones in general.
# No rule: a measurement. The command as it ran (one line there), carry [".gpu/bal"].
mkdir -p /tmp/gm && tar xJf .gpu/bal/gm.txz -C /tmp/gm
export BIN=/tmp/gm/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/fp8w2; mkdir -p $R
OUT=$R/w2s SET=small SHAPES="64x8192x8192 64x28672x8192 256x8192x8192 1024x28672x8192 1024x10240x8192 4096x8192x8192 8192x8192x8192 16384x8192x8192" \
	DTYPES=e4m3_row TILES=default SUSTAIN=2s LONG_SUSTAIN=2s PER_SHAPE=60 ROUNDS=2 BALANCED=1 DEADLINE=200 FP8_REF_ONLY=1 \
	bash bench/gemmalone-56.sh > $R/w2s.log 2>&1
echo rc $? at $SECONDS
grep -h ',fused,' $R/w2s/gemmalone-56/gemmalone-e4m3_row.csv | cut -d, -f1,6,8- | cut -c1-160
tar czf $OUT/fp8w2.tgz -C /tmp fp8w2
