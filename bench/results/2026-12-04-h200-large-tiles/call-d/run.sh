#!/bin/bash
# Call D: FP8 with row scales (e4m3_row), the untuned tile on every second shape of issue 56's whole set
# (SHARD=1/2: 65 of 129 shapes, spread over every M), against cuBLASLt FP8's best with row scales
# and bf16's, 0.2 s a kernel, one round: the first row-scale figure on the set. Call C's build.
set -u
mkdir -p /tmp/x && tar xJf .gpu/c.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH SYMMTUNE_CUBIN_CACHE=/tmp/cubin PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/d; SET=full SHARD=1/2 DTYPES=e4m3_row TILES=default SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=420 OUT=/tmp/d bash bench/gemmalone-56.sh > /tmp/d/gemmalone-56.log 2>&1; echo "gemmalone-56 rc $? at $SECONDS"
tail -n 6 /tmp/d/gemmalone-56.log | cut -c1-250; grep -c ',fused,' /tmp/d/gemmalone-56-1of2/gemmalone-e4m3_row.csv
tar czf $OUT/d.tgz -C /tmp d
