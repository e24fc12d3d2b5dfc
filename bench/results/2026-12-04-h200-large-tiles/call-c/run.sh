#!/bin/bash
# Call C: the rule with 128x224 in groups of 16 (searched, DefaultTileFor). 1. 128x224 g4 against g16
# in a torch program (program_kernels.py: agmm of one rank, queued calls, products checked against
# torch.mm, 15 interleaved rounds) at three shapes; 2. the untuned tile on issue 56's whole bf16 set
# (129 shapes), 0.2 s a kernel, one round, as call T of 2026-12-03.
set -u
mkdir -p /tmp/x && tar xJf .gpu/c.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
D=bench/results/2026-12-04-h200-large-tiles/call-c
mkdir -p /tmp/c; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > /tmp/c/machine.txt
timeout 150 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs $D/configs.json --rounds 15 --json /tmp/c/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > /tmp/c/kernels.txt; echo "program_kernels rc ${PIPESTATUS[0]} at $SECONDS"
tail -n 20 /tmp/c/kernels.txt | cut -c1-200
SET=full SHARD=1/1 DTYPES=bf16 TILES=default SUSTAIN=0.2s PER_SHAPE=20 DEADLINE=390 OUT=/tmp/c/set bash bench/gemmalone-56.sh > /tmp/c/set.log 2>&1; echo "gemmalone-56 rc $? at $SECONDS"
tail -n 3 /tmp/c/set.log; grep -c ',fused,' /tmp/c/set/gemmalone-56-1of1/gemmalone-bf16.csv
tar czf $OUT/c.tgz -C /tmp c
