#!/bin/bash
# PLANNED (written 2026-12-06 00:10 UTC, before any run; rename the folder to the day and card it runs
# on). The runtime checks owed since the last full run (bench/results/2026-12-02-h200-runtime.md):
# main's runtime changed after it (3e7d6c1: warm_from reads the units' recency from the LRU list;
# 1cde433, 3de2807: the trial load; 5d10442, efe1820: new tile options), so symmtune.torch's serving
# checks run again on main's library as issue 54 and issue 43 ask, at world 1:
#   bench/runtime_check.py (modules, memory at 1,000 row counts, lifetime, decode, compile, threads);
#   bench/serving-check.sh 1 (serving, layers, retired, capture_error, compile, memory, timing;
#   disagree needs 2 GPUs).
# A check, not a keep decision: each must print PASS, as on 2026-12-02.
# Carry [".gpu/ef3"] (lib.txz: python/symmtune/libsymmtune.so of main, built by
# bench/results/PLANNED-ef-defaults-set/build.sh). LIMIT bounds the whole script (seconds, default 150).
set -u
LIMIT=${LIMIT:-150} start=$SECONDS
R=${OUT:-bench/out}/runtime-recheck; mkdir -p $R /tmp/rt
tar xJf .gpu/ef3/lib.txz -C /tmp/rt
export BIN=/tmp/rt/bin SYMMTUNE_LIB=/tmp/rt/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
export PYTHONPATH=$PWD/python:$PWD/bench SYMMTUNE_CUBIN_CACHE=/tmp/symmtune-cubin
left() { echo $((LIMIT - (SECONDS - start))); }
timeout $(left) torchrun --nproc-per-node 1 bench/runtime_check.py 2>&1 |
	grep -v "Warning\|warnings.warn" > $R/runtime.txt
echo "runtime_check rc ${PIPESTATUS[0]} at $SECONDS"; grep "^CHECK" $R/runtime.txt | cut -c1-400
mkdir -p $BIN && ln -sf /bin/true $BIN/symmtune   # serving-check.sh needs only the library
OUT=$R LIMIT=$(left) bash bench/serving-check.sh 1 > $R/serving.log 2>&1
echo "serving-check rc $? at $SECONDS"; cut -c1-300 $R/serving-check-w1/summary.txt
