#!/bin/bash
# Call O (2026-12-03 session 2): the serving check again (its world-1 disagree set fixed), then
# issue 56's whole set (129 shapes) in bf16, the untuned tile against cuBLASLt's best, 0.2 s a kernel.
set -u
mkdir -p /tmp/x && tar xJf .gpu/n.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
LIMIT=60 OUT=/tmp/sv timeout 80 bash bench/serving-check.sh 1 > /dev/null 2>&1; echo "serving rc $? at $SECONDS"
cp /tmp/sv/serving-check-w1/serving-check.txt $OUT/serving-check.txt 2>/dev/null; grep -E "^CHECK|passed" $OUT/serving-check.txt | cut -c1-100
SET=full SHARD=1/1 DTYPES=bf16 TILES=default SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=450 OUT=$OUT bash bench/gemmalone-56.sh > $OUT/gemmalone-56.log 2>&1; echo "gemmalone-56 rc $? at $SECONDS"
tail -5 $OUT/gemmalone-56.log; grep -c ',fused,' $OUT/gemmalone-56-1of1/gemmalone-bf16.csv
