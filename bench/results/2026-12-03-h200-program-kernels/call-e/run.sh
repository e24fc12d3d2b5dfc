#!/bin/bash
# Call E (2026-12-03): why the torch program ordered the small-M tiles unlike gemmalone (call D).
# 1. gemmalone on the same shapes and tiles (two rounds, tile order reversed in the second);
# 2. the kernels' own times in the program (bench/experiments/program_kernels.py, torch.profiler);
# 3. torch_paired --together --queued (call D's method with each call queued behind a device sleep).
set -u
mkdir -p /tmp/x && tar xJf .gpu/e.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/machine.txt
python - > /tmp/cells.txt <<'PY'
import json
cells = {}
for c in json.load(open(".gpu/cfgs.json")):
    impl = c["config"]["impl"]
    if impl.startswith("fused:"):
        cells.setdefault((c.get("dtype", "bf16"), c["shape"]), []).append(impl[len("fused:"):])
for (dt, shape), tiles in cells.items():
    print(dt, shape, ",".join(["default"] + tiles))
PY
cat /tmp/cells.txt
for r in 1 2; do
  while read dt shape tiles; do
    [ $r = 2 ] && tiles=$(echo "$tiles" | tr , '\n' | tac | paste -sd,)
    timeout 60 $BIN/gemmalone -dtype $dt -shapes $shape -tiles "$tiles" -sustain 0.2s -bt=false >> $OUT/ga-r$r.csv 2>>$OUT/err.txt || echo "ga $dt $shape r$r rc $?"
  done < /tmp/cells.txt
  echo "gemmalone round $r at $SECONDS"
done
timeout 200 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs .gpu/cfgs.json --rounds 20 --json $OUT/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/kernels.txt; echo "program_kernels rc $? at $SECONDS"
tail -5 $OUT/kernels.txt
left=$((570 - SECONDS)); [ $left -gt 30 ] || exit 0
timeout $left torchrun --nproc-per-node 1 bench/torch_paired.py --configs .gpu/cfgs.json --together --queued --rounds 30 --json $OUT/queued.json 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/queued.txt; echo "queued rc $? at $SECONDS"
grep "^| 2" $OUT/queued.txt | head -60
