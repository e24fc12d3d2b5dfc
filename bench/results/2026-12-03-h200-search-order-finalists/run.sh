#!/bin/bash
# Call G (2026-12-03): issue 57's program-order bar with the new default (10 finalists), at a shape never used
# for it (2048x8192x8192), W=1, agmm and matmulrs, 40 s searches, no search flags.
set -u
mkdir -p /tmp/x && tar xJf .gpu/h.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH PYTHONUNBUFFERED=1
KERNELS="agmm matmulrs" SHAPES=2048x8192x8192 BEST=10 TOP=0 CHOICE=0 BUDGET_TIME=40s MODES="" TOGETHER=1 OUT=/tmp/o timeout 570 bash bench/search-check.sh 1 > $OUT/search-check.log 2>&1; echo "rc $? at $SECONDS"
tail -40 $OUT/search-check.log
cp /tmp/o/search-check-w1.tgz $OUT/ 2>/dev/null; cp /tmp/o/search-check-w1/*.md $OUT/ 2>/dev/null; ls /tmp/o/search-check-w1 $OUT
