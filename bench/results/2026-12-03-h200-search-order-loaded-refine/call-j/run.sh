#!/bin/bash
# Call J (2026-12-03): issue 57's program-order bar with every trial loaded, at 2048x8192x8192 (agmm and matmulrs),
# with the load's warm-up at its default (150 ms) and at none (SYMMTUNE_LOAD_WARM=0s: only the one product before
# each timed call); then matmulrs at 8192x3584x8192 with none; then clock_idle.py.
set -u
mkdir -p /tmp/x && tar xJf .gpu/j.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1
run() { # name warm kernels shape
  SYMMTUNE_LOAD_WARM=$2 SEARCH_ARGS="--trial-timing loaded" KERNELS="$3" SHAPES=$4 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=30s MODES="" TOGETHER=1 OUT=/tmp/o-$1 timeout 200 bash bench/search-check.sh 1 > $OUT/search-check-$1.log 2>&1; echo "$1 rc $? at $SECONDS"
  tar czf $OUT/search-check-$1.tgz -C /tmp/o-$1 search-check-w1 2>/dev/null
  cat /tmp/o-$1/search-check-w1/summary.md 2>/dev/null
  grep -h "2% or more apart in every pass\|search winner" /tmp/o-$1/search-check-w1/table-*.md 2>/dev/null | cut -c1-160
  grep -h "trials:" /tmp/o-$1/search-check-w1/search-*.txt
}
run w150 150ms "agmm matmulrs" 2048x8192x8192
run w0 0s "agmm matmulrs" 2048x8192x8192
run w0big 0s matmulrs 8192x3584x8192
[ $SECONDS -lt 500 ] && { timeout $((580 - SECONDS)) python bench/experiments/clock_idle.py --out $OUT --rounds 2 2>&1 | grep -v Warning | tail -22; echo "clock rc $? at $SECONDS"; }
