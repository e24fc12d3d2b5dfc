#!/bin/bash
# Call I (2026-12-03): issue 57's program-order bar at 2048x8192x8192 (the shape call G missed, 18/28) with the
# finalists re-measured loaded (--refine-timing loaded), then every trial loaded; then how long the load must run
# after an idle gap (clock_idle.py).
set -u
mkdir -p /tmp/x && tar xJf .gpu/m.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1
for v in refine:--refine-timing trial:--trial-timing; do
  name=${v%%:*}; flag=${v#*:}
  SEARCH_ARGS="$flag loaded" KERNELS="agmm matmulrs" SHAPES=2048x8192x8192 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=40s MODES="" TOGETHER=1 OUT=/tmp/o-$name timeout 240 bash bench/search-check.sh 1 > $OUT/search-check-$name.log 2>&1; echo "$name rc $? at $SECONDS"
  cp /tmp/o-$name/search-check-w1.tgz $OUT/search-check-$name.tgz 2>/dev/null
  cat /tmp/o-$name/search-check-w1/summary.md 2>/dev/null | tail -4
  grep -h "pairs\|ordered" /tmp/o-$name/search-check-w1/table-*.md 2>/dev/null | head -6 | cut -c1-200
done
timeout 110 python bench/experiments/clock_idle.py --out $OUT --rounds 2 2>&1 | grep -v Warning | tail -22; echo "clock rc $? at $SECONDS"
