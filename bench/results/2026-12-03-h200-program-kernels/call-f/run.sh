#!/bin/bash
# Call F (2026-12-03): a fused agmm of one rank without its end barrier.
# 1. program_kernels (products checked, then kernel times) on call E's cells and the README's fused shapes at W=1;
# 2. W=1 agmm searches (every trial verified) at two small-M shapes; 3. runtime_check and serving-check.
set -u
mkdir -p /tmp/x && tar xJf .gpu/h.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/machine.txt
timeout 200 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs .gpu/cfgsF.json --rounds 15 --json $OUT/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/kernels.txt; echo "program_kernels rc ${PIPESTATUS[0]} at $SECONDS"
grep -c "^| " $OUT/kernels.txt; grep "program_kernels:" $OUT/kernels.txt
mkdir -p /tmp/s
for cell in "bf16 m=64,n=8192,k=8192" "e4m3 m=64,n=2048,k=8192"; do
  set -- $cell
  tag=$1-$(echo $2 | tr -d '=,')
  timeout 60 $BIN/symmtune search --plugin-dir $BIN --backend cuda --kernel agmm --world 1 --shape $2 --dtype $1 --budget-time 15s --cache /tmp/s/$tag.toml --log /tmp/s/$tag.jsonl > /tmp/s/$tag.txt 2>&1; echo "search $tag rc $? at $SECONDS"
  tail -4 /tmp/s/$tag.txt
done
tar cJf $OUT/search.txz -C /tmp s
left=$((440 - SECONDS)); [ $left -gt 40 ] || exit 0
timeout $((left / 2)) torchrun --nproc-per-node 1 bench/runtime_check.py 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/runtime-check.txt; echo "runtime_check rc ${PIPESTATUS[0]} at $SECONDS"
grep -E "PASS|FAIL" $OUT/runtime-check.txt | tail -8
left=$((470 - SECONDS)); [ $left -gt 30 ] || exit 0
LIMIT=$left OUT=/tmp/sv bash bench/serving-check.sh 1 > /dev/null 2>&1; echo "serving rc $? at $SECONDS"
cp /tmp/sv/serving-check-w1/serving-check.txt $OUT/serving-check.txt; tail -3 $OUT/serving-check.txt
