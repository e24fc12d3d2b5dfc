#!/bin/bash
# Call N (2026-12-03 session 2): a fused matmulrs of one rank runs the GEMM alone (FusedPlain);
# then the queued program-order check at 256 rows (issue 57); runtime and serving checks.
set -u
mkdir -p /tmp/x && tar xJf .gpu/n.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/machine.txt
timeout 200 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs .gpu/cfgsN.json --rounds 15 --json $OUT/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/kernels.txt; echo "program_kernels rc ${PIPESTATUS[0]} at $SECONDS"
grep -i "error\|program_kernels:\|Traceback" $OUT/kernels.txt | head -5 | cut -c1-200
DTYPE=bf16 QUEUED=1 KERNELS="agmm matmulrs" SHAPES=256x8192x8192 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=25s MODES="" TOGETHER=1 OUT=/tmp/o timeout 200 bash bench/search-check.sh 1 > $OUT/search-check.log 2>&1; echo "search-check rc $? at $SECONDS"
tar czf $OUT/search-check.tgz -C /tmp/o search-check-w1 2>/dev/null
grep -h "2% or more apart\|search winner" /tmp/o/search-check-w1/table-*.md 2>/dev/null | cut -c1-160
grep -h "trials:" /tmp/o/search-check-w1/search-*.txt
timeout 120 torchrun --nproc-per-node 1 bench/runtime_check.py 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/runtime-check.txt; echo "runtime_check rc ${PIPESTATUS[0]} at $SECONDS"
grep -E "PASS|FAIL" $OUT/runtime-check.txt | cut -c1-120 | tail -8
LIMIT=110 OUT=/tmp/sv timeout 130 bash bench/serving-check.sh 1 > /dev/null 2>&1; echo "serving rc $? at $SECONDS"
cp /tmp/sv/serving-check-w1/serving-check.txt $OUT/serving-check.txt 2>/dev/null; tail -2 $OUT/serving-check.txt
