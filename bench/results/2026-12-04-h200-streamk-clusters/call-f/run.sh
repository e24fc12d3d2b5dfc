#!/bin/bash
# Call F (2026-12-04 evening, main at the clustered stream-K rule): (1) held out: the six shapes of
# 3,072-6,144 rows where the rule now takes 128x256:cl2:st, against :st, :cl2 and 256x160, two
# rounds; (2) untuned tiles at ragged token counts (M off every tile) with model-like N and K, one
# round, ten candidates; (3) FP8 with row scales at K = 2,048 and tensor scales at K = 1,024: the
# short-loop ping-pong pick against 128x256, two rounds; (4) clocks and power at 4096x57344x8192
# (nvidia-smi every 100 ms) with each kernel sustained 2 s, and the same product in short bursts.
set -u
mkdir -p /tmp/x && tar xJf .gpu/f.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/f; mkdir -p $R
S="3072x18432x6144 4096x12288x12288 4096x8192x22016 6144x18432x6144 6144x8192x22016 6144x9216x7168"
OUT=$R/st SET=small SHAPES="$S" DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=150 \
	TILES=default,128x256:s4:c2:g8:st,128x256:s4:c2:g8:cl2,256x160:s4:c2:g8,256x160:s4:c2:g8:cl2 \
	bash bench/gemmalone-56.sh > $R/st.log 2>&1
echo "st at $SECONDS"; tail -n 1 $R/st.log | cut -c1-250
S="100x8192x8192 300x28672x8192 600x14336x4096 777x10240x8192 1500x8192x8192 2500x28672x8192 3001x7168x8192 5000x8192x8192 9999x10240x8192 12000x8192x4096"
OUT=$R/ragged SET=small SHAPES="$S" DTYPES=bf16 SUSTAIN=0.1s ROUNDS=1 PER_SHAPE=30 DEADLINE=110 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:cl2:st,128x256:s4:c2:g8,256x160:s4:c2:g8,128x224:s5:c2:g16,128x160:s6:c2:g8,128x128:s6:c2:g4:pp,64x256:s5:c2:g8:pp,64x128:s8:c2:g8:pp \
	bash bench/gemmalone-56.sh > $R/ragged.log 2>&1
echo "ragged at $SECONDS"; tail -n 1 $R/ragged.log | cut -c1-250
OUT=$R/row SET=small SHAPES="8192x8192x2048 16384x14336x2048 4096x28672x2048 2048x8192x2048" DTYPES=e4m3_row SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=70 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8,128x128:s6:c2:g4:pp bash bench/gemmalone-56.sh > $R/row.log 2>&1
echo "row at $SECONDS"
OUT=$R/tensor SET=small SHAPES="8192x14336x1024 12288x5120x1024 16384x8192x1024 8192x8192x2048" DTYPES=e4m3 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=70 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8,128x128:s6:c2:g4:pp bash bench/gemmalone-56.sh > $R/tensor.log 2>&1
echo "tensor at $SECONDS"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > $R/smi.csv 2>&1 &
smi=$!
date +%s.%N > $R/power-times.txt
$BIN/gemmalone -shapes 4096x57344x8192 -tiles 128x256:s4:c2:g8:cl2,256x160:s4:c2:g8:cl2:st -sustain 2s -bt=false > $R/power-sustained.txt 2>&1
date +%s.%N >> $R/power-times.txt
$BIN/gemmalone -shapes 4096x57344x8192 -tiles 128x256:s4:c2:g8:cl2,256x160:s4:c2:g8:cl2:st -iters 50 -warmup 10 -bt=false > $R/power-bursts.txt 2>&1
date +%s.%N >> $R/power-times.txt
kill $smi
echo "power at $SECONDS"; cat $R/power-sustained.txt $R/power-bursts.txt | grep -v '^#' | cut -c1-160
tar czf $OUT/f.tgz -C /tmp f
