#!/bin/bash
# Call L (2026-12-03): issue 57's new landscapes: exhaustive world-1 searches on 1 x H200 (agmm and matmulrs,
# bf16 and FP8 e4m3, three shapes), every valid config measured, for tuner/testdata.
set -u
mkdir -p /tmp/x && tar xJf .gpu/k.txz -C /tmp/x
export BIN=/tmp/x/bin PATH=/opt/torch/.venv/bin:$PATH SYMMTUNE_CUBIN_CACHE=/tmp/cubin CUDA_VISIBLE_DEVICES=0
L=/tmp/land; mkdir -p $L
for cell in "agmm bf16 256 8192 8192" "matmulrs bf16 256 8192 8192" "agmm e4m3 8192 3584 8192" "matmulrs e4m3 8192 3584 8192" \
            "agmm bf16 8192 3584 8192" "matmulrs bf16 8192 3584 8192" "agmm e4m3 1024 8192 8192" "matmulrs e4m3 1024 8192 8192"; do
  set -- $cell; k=$1 dt=$2
  left=$((540 - SECONDS)); [ $left -lt 40 ] && { echo "skip $cell"; continue; }
  tag=m$3n$4k$5; name=landscape-cuda-$k-$dt-w1-$tag; [ $dt = bf16 ] && name=landscape-cuda-$k-w1-$tag
  timeout $left $BIN/symmtune search --plugin-dir $BIN --backend cuda --kernel $k --world 1 --shape m=$3,n=$4,k=$5 --dtype $dt \
    --exhaustive --refine-timing "" --cache $L/configs.toml --log $L/$name.jsonl > $L/$name.txt 2>&1; echo "$name rc $? at $SECONDS"
  grep -h "trials:" $L/$name.txt; grep -h "^winner" $L/$name.txt | cut -c1-200
done
tar czf $OUT/landscapes.tgz -C /tmp land; ls -la $OUT
