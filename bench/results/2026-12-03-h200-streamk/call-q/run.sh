#!/bin/bash
# Call Q (2026-12-03 session 3): stream-K tiles (":st"), first run. Correctness on ragged shapes
# (3-part tiles, ragged k) in bf16 / e4m3 / e4m3_row, then timing against their plain tiles and
# cuBLASLt's best at issue 56's large shapes, two paired rounds, 0.3 s a kernel.
set -u
mkdir -p /tmp/x && tar xJf .gpu/q.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/machine.txt
ST=128x256:s4:c2:g8,128x256:s4:c2:g8:st,128x224:s5:c2:g4:st,128x128:s6:c2:g8:st
for dt in bf16 e4m3 e4m3_row; do
  timeout 100 $BIN/gemmalone -dtype $dt -shapes 1000x3000x1000,3000x5000x2056,1100x6000x4104,8192x3584x8192 -tiles $ST -sustain 0.05s -bt=false > $OUT/check-$dt.csv 2> $OUT/check-$dt.err
  echo "check $dt rc $? at $SECONDS: $(grep -c ',fused,' $OUT/check-$dt.csv) fused rows, $(grep -c WRONG $OUT/check-$dt.csv) wrong"
done
TILES=128x256:s4:c2:g8,128x256:s4:c2:g8:st,128x256:s4:c2:g8:cl2,128x224:s5:c2:g4,128x224:s5:c2:g4:st \
SHAPES="8192x3584x8192 16384x3584x8192 4096x14336x4096 8192x8192x8192 12288x5120x5120 1024x28672x8192 1024x3584x8192" \
SET=full DTYPES=bf16 SUSTAIN=0.3s ROUNDS=2 PER_SHAPE=40 DEADLINE=330 OUT=$OUT bash bench/gemmalone-56.sh > $OUT/gemmalone-56.log 2>&1
echo "timing rc $? at $SECONDS"; tail -30 $OUT/gemmalone-56.log
