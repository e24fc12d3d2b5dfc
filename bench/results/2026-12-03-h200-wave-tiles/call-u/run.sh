#!/bin/bash
# Call U (2026-12-03 session 4): 160-wide tiles (128x160, 256x160) for wave quantization.
# 1. serving check (runtime after last session's stream-K workspace change); 2. correctness of the new tiles
# on ragged shapes (bf16, e4m3, e4m3_row); 3. throughput at many waves (fit the efficiency);
# 4. shapes where the tiles fit the waves: issue-set and held-out ones, two rounds.
set -u
mkdir -p /tmp/x && tar xJf .gpu/u.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
export PYTHONPATH=$PWD/python:$PWD/bench:$PWD/bench/experiments PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $OUT/machine.txt
LIMIT=60 OUT=/tmp/sv timeout 80 bash bench/serving-check.sh 1 > /dev/null 2>&1; echo "serving rc $? at $SECONDS"
cp /tmp/sv/serving-check-w1/serving-check.txt $OUT/serving-check.txt 2>/dev/null; grep -E "^CHECK|passed" $OUT/serving-check.txt | cut -c1-100
NT=128x160:s6:c2:g8,256x160:s4:c2:g8,256x160:s4:c2:g8:cl2
for dt in bf16 e4m3 e4m3_row; do
  timeout 60 $BIN/gemmalone -dtype $dt -shapes 1000x3000x4096,3000x5000x4112,1100x6000x8192,520x1288x2064 -tiles $NT -sustain 0.05s -bt=false > $OUT/check-$dt.csv 2> $OUT/check-$dt.err
  echo "check $dt rc $? at $SECONDS: $(grep -c ',fused,' $OUT/check-$dt.csv) fused rows, $(grep -c WRONG $OUT/check-$dt.csv) wrong"
done
mkdir -p /tmp/e /tmp/h
TILES=128x256:s4:c2:g8:cl2,$NT \
SHAPES="8192x8192x8192 16384x8192x8192 16384x3584x8192 4096x28672x8192 16384x10240x8192 4096x14336x8192 16384x5120x8192 16384x28672x8192" \
SET=full DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=120 OUT=/tmp/e bash bench/gemmalone-56.sh > $OUT/eff.log 2>&1
echo "efficiency rc $? at $SECONDS"; tar czf $OUT/eff.tgz -C /tmp/e .
TILES=default,$NT,128x256:s4:c2:g8,128x128:s6:c2:g4:pp,128x224:s5:c2:g4 \
SHAPES="1024x2560x8192 1024x5120x8192 4096x1280x8192 4096x2560x8192 1024x10240x8192 1024x2560x4096 1536x1536x8192 1536x3072x8192 2048x1280x8192 2048x2560x8192 3072x1536x4096 4096x1280x4096 1024x5120x4096 2048x6400x8192 4096x6400x8192 12288x1280x8192 3072x5120x8192 6144x2560x8192 4096x3840x8192 8192x3840x8192 3072x3072x8192" \
SET=full DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=300 OUT=/tmp/h bash bench/gemmalone-56.sh > $OUT/waves.log 2>&1
echo "waves rc $? at $SECONDS"; tar czf $OUT/waves.tgz -C /tmp/h .
for d in /tmp/e /tmp/h; do grep -h ",fused," $d/*/gemmalone-bf16.csv | awk -F, '{print $1, $3, $8}' | sort | awk '{k=$1" "$2; s[k]+=$3; n[k]++} END {for (k in s) printf "%s %.3f\n", k, s[k]/n[k]}' | sort; done
