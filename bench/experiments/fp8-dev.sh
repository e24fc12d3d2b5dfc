#!/bin/sh
# fp8-dev.sh: the FP8 pieces alone on one GPU (issue 30): cuBLASLt's FP8
# products against a float64 reference (bin/cublaslt.test), then the fused
# Hopper GEMM's FP8 tiles checked and timed against cuBLASLt FP8 and bf16
# (bin/gemmalone), and a bf16 regression row. Run from the checkout on a GPU
# machine after `tar xzf .gpu/bins.tgz -C /tmp`; writes into $OUT.
out=${OUT:-/tmp/fp8-dev}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > "$out/gpu.csv" 2>&1
timeout 120 /tmp/bin/cublaslt.test -test.v > "$out/cublaslt.txt" 2>&1; echo "cublaslt.test rc $?"
T=${TILES:-128x256:s4:c2:g8,128x256:s4:c2:g4,256x128:s4:c2:g8,128x128:s6:c2:g4:pp,128x256:s4:c2:g8:cl2,256x128:s4:c2:g8:cl2,128x224:s5:c2:g4,64x256:s5:c2:g8:pp}
for d in ${DTYPES:-e4m3 e4m3_row}; do
	timeout ${GEMM_TIMEOUT:-150} /tmp/bin/gemmalone -dtype $d -shapes ${SHAPES:-8192x3584x8192,4096x1792x4096} -tiles "$T" > "$out/gemmalone-$d.csv" 2> "$out/gemmalone-$d.err"
	echo "gemmalone $d rc $?"
done
timeout 90 /tmp/bin/gemmalone -dtype bf16 -shapes 8192x3584x8192 -tiles 128x256:s4:c2:g8,128x256:s4:c2:g8:cl2 > "$out/gemmalone-bf16.csv" 2> "$out/gemmalone-bf16.err"
echo "gemmalone bf16 rc $?"
