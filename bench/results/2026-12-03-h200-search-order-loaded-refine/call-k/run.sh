#!/bin/bash
# Call K (2026-12-03): issue 57's program-order bar with the new defaults (no search flags): barrier-timed first pass,
# 10 finalists re-measured loaded (DefaultJob's RefineTiming), world-1 matmulrs pipelines deduplicated (Validate);
# at 2048x8192x8192 (used to choose) and 4096x8192x4096 (never used), agmm and matmulrs.
set -u
mkdir -p /tmp/x && tar xJf .gpu/k.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1
run() { # name kernels shape
  KERNELS="$2" SHAPES=$3 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=30s MODES="" TOGETHER=1 OUT=/tmp/o-$1 timeout 230 bash bench/search-check.sh 1 > $OUT/search-check-$1.log 2>&1; echo "$1 rc $? at $SECONDS"
  tar czf $OUT/search-check-$1.tgz -C /tmp/o-$1 search-check-w1 2>/dev/null
  cat /tmp/o-$1/search-check-w1/summary.md 2>/dev/null
  grep -h "2% or more apart in every pass\|search winner" /tmp/o-$1/search-check-w1/table-*.md 2>/dev/null | cut -c1-160
  grep -h "trials:\|^time:" /tmp/o-$1/search-check-w1/search-*.txt
}
run s2048 "agmm matmulrs" 2048x8192x8192
run s4096 "agmm matmulrs" 4096x8192x4096
[ $SECONDS -lt 470 ] && { timeout 100 torchrun --nproc-per-node 1 bench/runtime_check.py 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/runtime-check.txt; echo "runtime_check rc ${PIPESTATUS[0]} at $SECONDS"; grep -E "PASS|FAIL" $OUT/runtime-check.txt | cut -c1-120 | tail -8; }
