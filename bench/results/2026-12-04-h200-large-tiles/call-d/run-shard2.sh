#!/bin/bash
# Shard 2 of 2 (the other 64 shapes), DEADLINE 195 s: what the session's device time left (59 of 64 shapes ran).
# Call D: FP8 with row scales (e4m3_row), the untuned tile on every second shape of issue 56's whole set
# (SHARD=2/2: 65 of 129 shapes, spread over every M), against cuBLASLt FP8's best with row scales
# and bf16's, 0.2 s a kernel, one round: the first row-scale figure on the set. Call C's build.
set -u
mkdir -p /tmp/x && tar xJf .gpu/c.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH SYMMTUNE_CUBIN_CACHE=/tmp/cubin PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/d2; SET=full SHARD=2/2 DTYPES=e4m3_row TILES=default SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=195 OUT=/tmp/d2 bash bench/gemmalone-56.sh > /tmp/d2/gemmalone-56.log 2>&1; echo "gemmalone-56 rc $? at $SECONDS"
tail -n 6 /tmp/d2/gemmalone-56.log | cut -c1-250; grep -c ',fused,' /tmp/d2/gemmalone-56-2of2/gemmalone-e4m3_row.csv
tar czf $OUT/d2.tgz -C /tmp d2
