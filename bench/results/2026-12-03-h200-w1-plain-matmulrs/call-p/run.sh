#!/bin/bash
# Call P (2026-12-03 session 2): issue 56's whole set from 1,024 rows (78 shapes), bf16, the five
# 128-row-and-up candidate tiles against cuBLASLt's best, 0.2 s a kernel: which tile the untuned rule
# should take where the tiles fill many waves.
set -u
mkdir -p /tmp/x && tar xJf .gpu/n.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin CUDA_VISIBLE_DEVICES=0
SHAPES="$($BIN/gemmalone -set issue56 -list | awk -F'x' '$1>=1024' | tr '\n' ' ')" SET=full SHARD=1/1 DTYPES=bf16 \
  TILES=128x256:s4:c2:g8:cl2,128x256:s4:c2:g8,256x128:s4:c2:g8:cl2,128x224:s5:c2:g4,128x128:s6:c2:g4:pp \
  SUSTAIN=0.2s PER_SHAPE=25 DEADLINE=500 OUT=$OUT bash bench/gemmalone-56.sh > $OUT/gemmalone-56.log 2>&1; echo "gemmalone-56 rc $? at $SECONDS"
tail -3 $OUT/gemmalone-56.log | cut -c1-300; grep -c ',fused,' $OUT/gemmalone-56-1of1/gemmalone-bf16.csv
