#!/bin/bash
# Call W (2026-12-03 session 4): the untuned tile (ca7f4ab: 160-column tiles in the rule) on issue 56's
# whole set in FP8 e4m3 (tensor scales) against cuBLASLt FP8's best (fast accumulation), 0.2 s, one round.
set -u
mkdir -p /tmp/x && tar xJf .gpu/v.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH SYMMTUNE_CUBIN_CACHE=/tmp/cubin PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/w; SET=full SHARD=1/1 DTYPES=e4m3 TILES=default SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=500 OUT=/tmp/w bash bench/gemmalone-56.sh > /tmp/w/gemmalone-56.log 2>&1; echo "gemmalone-56 rc $? at $SECONDS"
mkdir -p /tmp/w; tail -12 /tmp/w/gemmalone-56.log | cut -c1-250; grep -c ',fused,' /tmp/w/gemmalone-56-1of1/gemmalone-e4m3.csv
tar czf $OUT/callW.tgz -C /tmp w
