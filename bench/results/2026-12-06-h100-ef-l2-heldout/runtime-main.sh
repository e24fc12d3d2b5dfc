#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-06 04:23 UTC: ../2026-12-06-h100-ef-l2-heldout.md (every check PASS).
# PLANNED (written 2026-12-06 04:05 UTC, before any run). The serving runtime on main's library
# (.gpu/fix/lib.txz from 2026-12-06-h100-runtime-recheck/build.sh): every change after 9ec359a (each
# unit's close in the relaxed capture mode, GemmOpen's bounds from SYMMTUNE_RUNTIME_UNITS, one capture
# query per GEMM call: gpu.Runner.EnqueueKnown) ran on CPU fakes only. Here: the serving check's
# serving and layers parts RUNS times (default 2) and runtime_check.py once, as fix-run.sh ran them.
# Pass: every CHECK line PASS. Carry [".gpu/fix"] (lib.txz only is needed). Outputs: runtime.tgz.
set -u
R=/tmp/rtmain; mkdir -p $R /tmp/new/bin && ln -sf /bin/true /tmp/new/bin/symmtune
tar xJf .gpu/fix/lib.txz -C /tmp/new
export PATH=/opt/torch/.venv/bin:$PATH
for i in $(seq 1 "${RUNS:-2}"); do
	BIN=/tmp/new/bin SYMMTUNE_LIB=/tmp/new/python/symmtune/libsymmtune.so OUT=$R/$i LIMIT=60 \
		bash bench/serving-check.sh 1 --only serving,layers > $R/$i.log 2>&1
	echo "serving run $i rc $? at $SECONDS: $(grep '^CHECK' $R/$i.log | cut -c1-90 | tr '\n' ' ')"
done
export SYMMTUNE_LIB=/tmp/new/python/symmtune/libsymmtune.so NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export PYTHONPATH=$PWD/python:$PWD/bench PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
timeout 120 torchrun --nproc-per-node 1 bench/runtime_check.py 2>&1 | grep -v "Warning\|warnings.warn" > $R/runtime.txt
echo "runtime_check rc ${PIPESTATUS[0]} at $SECONDS"; grep "^CHECK" $R/runtime.txt | cut -c1-300
tar czf ${OUT:-/tmp}/runtime.tgz -C /tmp rtmain
