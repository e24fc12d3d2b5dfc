#!/bin/sh
# graph-alternate.sh: bench/experiments/graph_alternate.py's cases, one process each (a
# fault is sticky), on 2 GPUs. CASES overrides the list. Carry .gpu
# (scripts/gpu-bundle.sh); run from the checkout on the GPU machine.
[ -x /tmp/bin/symmtune ] || tar xzf .gpu/bins.tgz -C /tmp
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
export SYMMTUNE_LIB=/tmp/python/symmtune/libsymmtune.so PYTHONPATH=$PWD/python:$PWD/bench
for c in ${CASES:-agmm:e4m3:alone agmm:e4m3:alternate-sync agmm:e4m3:alternate agmm:bf16:alternate matmulrs:bf16:alternate matmulrs:e4m3:alternate}; do
	timeout 90 torchrun --nproc-per-node 2 bench/experiments/graph_alternate.py "$c" 50 > "${OUT:-/tmp}/alt-$(echo $c | tr ':' '-').txt" 2>&1
	rc=$?
	line=$(grep -h "rel_rms\|Error:" "${OUT:-/tmp}/alt-$(echo $c | tr ':' '-').txt" | grep -v "^\[rank1\]" | head -2 | cut -c1-200)
	echo "$c rc $rc: $line"
done
