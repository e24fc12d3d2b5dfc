#!/bin/bash
# Call M (2026-12-03): the program-order bar with the new defaults on a program not used to choose them:
# FP8 e4m3 (tensor scales) at 8192x3584x8192, agmm and matmulrs; then bf16 at 256 rows if time allows.
set -u
mkdir -p /tmp/x && tar xJf .gpu/k.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1
run() { # name dtype shape timeout
  DTYPE=$2 KERNELS="agmm matmulrs" SHAPES=$3 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=25s MODES="" TOGETHER=1 OUT=/tmp/o-$1 timeout $4 bash bench/search-check.sh 1 > $OUT/search-check-$1.log 2>&1; echo "$1 rc $? at $SECONDS"
  tar czf $OUT/search-check-$1.tgz -C /tmp/o-$1 search-check-w1 2>/dev/null
  cat /tmp/o-$1/search-check-w1/summary.md 2>/dev/null
  grep -h "2% or more apart\|search winner" /tmp/o-$1/search-check-w1/table-*.md 2>/dev/null | cut -c1-160
  grep -h "trials:" /tmp/o-$1/search-check-w1/search-*.txt
}
run e4m3 e4m3 8192x3584x8192 170
[ $SECONDS -lt 140 ] && run m256 bf16 256x8192x8192 $((270 - SECONDS))
