#!/bin/bash
# Call V (2026-12-03 session 4): the committed rule with 160-column tiles (ca7f4ab). 1. in a torch program
# (program_kernels.py: queued calls, products checked against torch.mm); 2. the issue-set bf16 shapes whose
# untuned tile changed, against the old tile, two rounds; 3. FP8 (tensor and row scales) where the rule changed.
set -u
mkdir -p /tmp/x && tar xJf .gpu/v.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
mkdir -p /tmp/v; nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > /tmp/v/machine.txt
timeout 150 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs .gpu/cfgsV.json --rounds 15 --json /tmp/v/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > /tmp/v/kernels.txt; echo "program_kernels rc ${PIPESTATUS[0]} at $SECONDS"
tail -30 /tmp/v/kernels.txt | cut -c1-200
mkdir -p /tmp/b1 /tmp/b2 /tmp/f
TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:st,128x256:s4:c2:g8 \
SHAPES="4096x14336x4096 4096x28672x8192 16384x7168x8192 16384x29568x8192 1024x57344x8192" \
SET=full DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=110 OUT=/tmp/b1 bash bench/gemmalone-56.sh > /tmp/v/b1.log 2>&1; echo "bf16 big rc $? at $SECONDS"
TILES=default,64x128:s8:c2:g8:pp,128x128:s6:c2:g4:pp,64x224:s6:c2:g8:pp SHAPES="256x10240x8192" \
SET=full DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=40 OUT=/tmp/b2 bash bench/gemmalone-56.sh > /tmp/v/b2.log 2>&1; echo "bf16 256 rc $? at $SECONDS"
TILES=default,128x128:s6:c2:g4:pp,128x224:s5:c2:g4,64x128:s8:c2:g8:pp \
SHAPES="1024x2560x8192 1024x5120x8192 1024x10240x8192 256x10240x8192 2048x2560x8192 1536x3072x8192" \
SET=full DTYPES="e4m3 e4m3_row" SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=60 DEADLINE=250 OUT=/tmp/f bash bench/gemmalone-56.sh > /tmp/v/f.log 2>&1; echo "fp8 rc $? at $SECONDS"
for d in /tmp/b1 /tmp/b2 /tmp/f; do for c in $d/*/gemmalone-*.csv; do grep -h ",fused," $c | awk -F, '{r=($11!="-" && $11!="")?$11:$8; print $1, $9, $3, r+0}' | sort | awk '{k=$1" "$2" "$3; s[k]+=$4; n[k]++} END {for (k in s) printf "%s %.3f\n", k, s[k]/n[k]}' | sort; grep -h "# default" $c | sort -u; done; done
tar czf $OUT/callV.tgz -C /tmp v b1 b2 f
