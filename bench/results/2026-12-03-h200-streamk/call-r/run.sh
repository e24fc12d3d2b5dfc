#!/bin/bash
# Call R (2026-12-03 session 3): stream-K with each CTA's pieces taken last first (k-aligned) and the
# min-gain rule. Correctness on ragged shapes, then timing against the plain tiles and cuBLASLt's best.
set -u
mkdir -p /tmp/x && tar xJf .gpu/r.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/machine.txt
ST=128x256:s4:c2:g8,128x256:s4:c2:g8:st,128x224:s5:c2:g4:st,128x128:s6:c2:g8:st
for dt in bf16 e4m3_row; do
  timeout 60 $BIN/gemmalone -dtype $dt -shapes 1000x3000x4096,3000x5000x4112,1100x6000x8192 -tiles $ST -sustain 0.05s -bt=false > $OUT/check-$dt.csv 2> $OUT/check-$dt.err
  echo "check $dt rc $? at $SECONDS: $(grep -c ',fused,' $OUT/check-$dt.csv) fused rows, $(grep -c WRONG $OUT/check-$dt.csv) wrong"
done
mkdir -p /tmp/o
TILES=default,128x256:s4:c2:g8,128x256:s4:c2:g8:st \
SHAPES="8192x3584x8192 16384x3584x8192 4096x14336x4096 8192x8192x8192 12288x5120x5120 1024x28672x8192 1024x3584x8192 4096x1792x4096 2048x8192x8192 1024x7392x8192 4096x5120x8192 4096x8192x8192 4096x28672x8192 16384x8192x3584 16384x5120x8192 4096x14784x8192 16384x28672x8192 1024x14336x8192 4096x1280x8192 16384x1280x8192 1024x2560x8192" \
SET=full DTYPES=bf16 SUSTAIN=0.25s ROUNDS=2 PER_SHAPE=40 DEADLINE=330 OUT=/tmp/o bash bench/gemmalone-56.sh > $OUT/gemmalone-56.log 2>&1
echo "timing rc $? at $SECONDS"; tar czf $OUT/timing.tgz -C /tmp/o .
grep -h ",fused," /tmp/o/*/gemmalone-bf16.csv | awk -F, '{print $1, $3, $6}' | sort | awk '{k=$1" "$2; s[k]+=$3; n[k]++} END {for (k in s) printf "%s %.1f\n", k, s[k]/n[k]}' | sort
