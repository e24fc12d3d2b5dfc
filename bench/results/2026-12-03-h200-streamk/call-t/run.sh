#!/bin/bash
# Call T (2026-12-03 session 3): the untuned tile (tileEfficiency since call P, stream-K since call R)
# on issue 56's whole set (129 shapes), bf16, against cuBLASLt's best, 0.2 s a kernel, one round.
set -u
mkdir -p /tmp/x && tar xJf .gpu/s.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
SET=full SHARD=1/1 DTYPES=bf16 TILES=default SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=420 OUT=/tmp/o bash bench/gemmalone-56.sh > /tmp/o.log 2>&1; echo "gemmalone-56 rc $? at $SECONDS"
cp /tmp/o.log $OUT/gemmalone-56.log; tar czf $OUT/call-t.tgz -C /tmp/o .
tail -3 /tmp/o.log; grep -c ',fused,' /tmp/o/gemmalone-56-1of1/gemmalone-bf16.csv
