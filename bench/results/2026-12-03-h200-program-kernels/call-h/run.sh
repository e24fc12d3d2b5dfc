#!/bin/bash
# Call H (2026-12-03): a matmulrs pipeline of one rank writes its product straight into the output.
set -u
mkdir -p /tmp/x && tar xJf .gpu/m.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
timeout 120 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs .gpu/cfgsH.json --rounds 15 --json $OUT/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/kernels.txt; echo "program_kernels rc ${PIPESTATUS[0]} at $SECONDS"
grep "pipeline\|program_kernels:" $OUT/kernels.txt | cut -c1-200
mkdir -p /tmp/s
for cell in "bf16 m=64,n=8192,k=8192" "e4m3 m=8192,n=3584,k=8192"; do
  set -- $cell
  tag=$1-$(echo $2 | tr -d '=,')
  timeout 60 $BIN/symmtune search --plugin-dir $BIN --backend cuda --kernel matmulrs --world 1 --shape $2 --dtype $1 --budget-time 15s --cache /tmp/s/$tag.toml --log /tmp/s/$tag.jsonl > /tmp/s/$tag.txt 2>&1; echo "search $tag rc $? at $SECONDS"
  grep "trials:" /tmp/s/$tag.txt; tail -3 /tmp/s/$tag.txt | cut -c1-250
done
tar cJf $OUT/search.txz -C /tmp s
timeout 120 torchrun --nproc-per-node 1 bench/runtime_check.py 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/runtime-check.txt; echo "runtime_check rc ${PIPESTATUS[0]} at $SECONDS"
grep -E "PASS|FAIL" $OUT/runtime-check.txt | cut -c1-120 | tail -8
LIMIT=120 OUT=/tmp/sv bash bench/serving-check.sh 1 > /dev/null 2>&1; echo "serving rc $? at $SECONDS"
cp /tmp/sv/serving-check-w1/serving-check.txt $OUT/serving-check.txt; tail -2 $OUT/serving-check.txt
