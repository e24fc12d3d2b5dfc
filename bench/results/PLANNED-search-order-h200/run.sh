#!/bin/bash
# PLANNED (written 2026-12-08 00:15 UTC, committed before any run; rename the folder to the day and card once it
# has run). Issue 57's program-order bar re-checked with main as of 2026-12-08 (99d7500). Since the last check
# (2026-12-05-h200-search-order-recheck, main at 1bcd8e3) the strategy took the tiny budgets' Box-Cox process,
# tinyClasses, tinyARD, the far picks and the process fitted to passing configs only; this re-checks the bar with
# them, at a shape no run or landscape has used, fixed here before the run: 2560 x 12288 x 6144 bf16, agmm and
# matmulrs, world 1, 30 s searches, their top 10 in a torch program (30 interleaved rounds x 2 passes, with the
# untuned config). The method is the 2026-12-05 recheck's, unchanged. Question: of the top 10's pairs 2% or more
# apart in every pass of the program, are at least 95% ordered alike by the search (its finalists' order)?
# The bar names 1 x H200; on an H100 (amended 00:29, still before any run) it runs the same and counts as a check
# on that card, not as the bar. About 100 s.
# Build: bash bench/results/PLANNED-search-order-h200/build.sh (.gpu/order/s.txz); carry [".gpu/order"].
set -u
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee $OUT/machine.txt
mkdir -p /tmp/b && tar xJf .gpu/order/s.txz -C /tmp/b
export BIN=/tmp/b/bin SYMMTUNE_LIB=/tmp/b/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1
O=/tmp/o-s2560; mkdir -p $O
KERNELS="agmm matmulrs" SHAPES=2560x12288x6144 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=30s MODES="" TOGETHER=1 OUT=$O timeout 300 bash bench/search-check.sh 1 > $OUT/search-check-s2560.log 2>&1; echo "search-check rc $? at $SECONDS"
tar czf $OUT/search-check-s2560.tgz -C $O search-check-w1 2>/dev/null
cat $O/search-check-w1/summary.md 2>/dev/null
grep -h "2% or more apart in every pass\|search winner" $O/search-check-w1/table-*.md 2>/dev/null | cut -c1-200
grep -h "trials:\|^time:" $O/search-check-w1/search-*.txt
