#!/bin/bash
# Issue 57's program-order bar re-checked with main as of 2026-12-05 (a30ec25: the tenth fit's
# family-local steps, finalists re-measured loaded as since 2026-12-03), at a shape never used before,
# fixed here before the run: 3072 x 10240 x 8192 bf16, agmm and matmulrs, world 1, 30 s searches, their
# top 10 in a torch program (30 interleaved rounds x 2 passes, together with the untuned config).
set -u
# .gpu/order/s.txz: scripts/gpu-bundle.sh's bins.tgz less the GPU tests, gemmalone and the all-reduce plugin (xz), under the 64 MiB carry.
mkdir -p /tmp/b && tar xJf .gpu/order/s.txz -C /tmp/b
export BIN=/tmp/b/bin SYMMTUNE_LIB=/tmp/b/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1
O=/tmp/o-s3072; mkdir -p $O
KERNELS="agmm matmulrs" SHAPES=3072x10240x8192 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=30s MODES="" TOGETHER=1 OUT=$O timeout 300 bash bench/search-check.sh 1 > $OUT/search-check-s3072.log 2>&1; echo "search-check rc $? at $SECONDS"
tar czf $OUT/search-check-s3072.tgz -C $O search-check-w1 2>/dev/null
cat $O/search-check-w1/summary.md 2>/dev/null
grep -h "2% or more apart in every pass\|search winner" $O/search-check-w1/table-*.md 2>/dev/null | cut -c1-200
grep -h "trials:\|^time:" $O/search-check-w1/search-*.txt
