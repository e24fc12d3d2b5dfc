#!/bin/bash
# Call S (2026-12-03 session 3): stream-K in a torch program (the runtime's runner: workspace by
# SMs, products checked against torch.mm), then the untuned rule's stream-K pick on shapes not used to
# fit it (held out), two paired rounds, then the runtime check.
set -u
mkdir -p /tmp/x && tar xJf .gpu/s.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv > $OUT/machine.txt
for dt in bf16 e4m3_row; do
  timeout 70 $BIN/gemmalone -dtype $dt -shapes 1000x3000x16384,3000x2000x16400,64x1280x8192,200x1096x4144 -tiles 128x256:s4:c2:g8:st,128x224:s5:c2:g4:st,splitk -sustain 0.03s -bt=false > $OUT/check-$dt.csv 2> $OUT/check-$dt.err
  echo "check $dt rc $? at $SECONDS: $(grep -c ',fused,' $OUT/check-$dt.csv) fused rows, $(grep -c WRONG $OUT/check-$dt.csv) wrong, spills: $(grep ',fused,' $OUT/check-$dt.csv | cut -d, -f4 | sort | uniq -c | tr '\n' ' ')"
done
timeout 120 torchrun --nproc-per-node 1 bench/experiments/program_kernels.py --configs .gpu/cfgsS.json --rounds 15 --json $OUT/kernels.json 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/kernels.txt; echo "program_kernels rc ${PIPESTATUS[0]} at $SECONDS"
tail -25 $OUT/kernels.txt | cut -c1-180
mkdir -p /tmp/o
TILES=default,128x256:s4:c2:g8,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:st \
SHAPES="4096x29568x8192 16384x7168x8192 16384x8192x8192 4096x8192x28672 16384x14336x8192 4096x57344x8192 16384x1280x8192 1024x57344x8192" \
SET=full DTYPES=bf16 SUSTAIN=0.25s ROUNDS=2 PER_SHAPE=60 DEADLINE=200 OUT=/tmp/o bash bench/gemmalone-56.sh > $OUT/gemmalone-56.log 2>&1
echo "timing rc $? at $SECONDS"; tar czf $OUT/timing.tgz -C /tmp/o .
grep -h ",fused," /tmp/o/*/gemmalone-bf16.csv | awk -F, '{print $1, $3, $6}' | sort | awk '{k=$1" "$2; s[k]+=$3; n[k]++} END {for (k in s) printf "%s %.1f\n", k, s[k]/n[k]}' | sort
timeout 90 torchrun --nproc-per-node 1 bench/runtime_check.py 2>&1 | grep -v "Warning\|warnings.warn" > $OUT/runtime-check.txt; echo "runtime_check rc ${PIPESTATUS[0]} at $SECONDS"
grep -E "PASS|FAIL" $OUT/runtime-check.txt | cut -c1-120 | tail -8
