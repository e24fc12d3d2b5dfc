#!/bin/bash
# Call X (2026-12-03 session 4): FP8 at K = 3696 (rows 16 bytes off a 32-byte sector) was 0.63-0.84x cuBLASLt FP8
# in call W. Does the TMA L2 promotion (0 none, 1 64B, 2 128B, 3 256B: the kernel's) change it? Throwaway builds.
set -u
mkdir -p /tmp/x && tar xJf .gpu/x.txz -C /tmp/x; export SYMMTUNE_CUBIN_CACHE=/tmp/cubin CUDA_VISIBLE_DEVICES=0
for p in 3 0 1 2 3; do
  timeout 40 /tmp/x/bin/gemmalone-p$p -dtype e4m3 -shapes 256x8192x3696,4096x8192x3696,256x8192x3584,4096x8192x3584 -tiles default -sustain 0.1s -bt=false 2>/dev/null | grep ",fused," | cut -d, -f1,3,6,11 | sed "s/^/p$p /"
done
