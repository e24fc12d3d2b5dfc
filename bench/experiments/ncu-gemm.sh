#!/bin/bash
# bench/experiments/ncu-gemm.sh: where the Hopper GEMM's cycles go, from Nsight Compute
# (the device machines have ncu but no working nsys): one profiled launch of
# each tile in TILES, and of cuBLASLt's first kernel, at SHAPE, with the warp
# state and per-instruction stall samples, so the main loop's waits, the
# epilogue's and the gaps between tiles can be told apart.
#   tar xzf .gpu/bins.tgz -C /tmp
#   BIN=/tmp/bin OUT=$OUT SHAPE=8192x3584x8192 TILES=128x256:s4:c2:g8 bash bench/experiments/ncu-gemm.sh
# DTYPE (default bf16) is gemmalone's -dtype (e4m3, e4m3_row: the FP8 tiles);
# NO_CUBLAS=1 profiles only the tiles. NCU_ARGS adds options to the
# tiles' profiling runs (e.g. "--cache-control none": ncu flushes the caches
# before each pass by default, so a kernel runs with a cold L2), CUBLAS_NCU_ARGS
# to cuBLASLt's: apart, because "--launch-skip 1" there profiles another
# kernel (in an FP8 run, a bf16 GEMM: 2026-12-06-h100-sass-fp8.md).
# Writes $OUT/ncu/: a .ncu-rep per kernel, its details page and its SASS
# source page (CSV, one row per instruction with its stall samples; summed
# by bench/experiments/ncu_sass.py).
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-bin}
SHAPE=${SHAPE:-8192x3584x8192}
TILES=${TILES:-128x256:s4:c2:g8}
EXTRA=${EXTRA:-}
NCU=${NCU:-ncu}
SECTIONS="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section SourceCounters --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
mkdir -p "$OUT/ncu"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}

profile() { # name kernel-filter tiles ncu-options
	local name=$1 filter=$2 tiles=$3 args=$4
	timeout 240 "$NCU" --clock-control none $args --kernel-name "$filter" --launch-count 1 $SECTIONS \
		-f -o "$OUT/ncu/$name" "$BIN/gemmalone" -shapes "$SHAPE" -tiles "$tiles" -dtype "${DTYPE:-bf16}" -iters 1 -warmup 0 ${EXTRA:+-extra "$EXTRA"} \
		>"$OUT/ncu/$name.log" 2>&1 || echo "ncu $name: rc $?"
	[ -f "$OUT/ncu/$name.ncu-rep" ] || return
	"$NCU" --import "$OUT/ncu/$name.ncu-rep" --page details >"$OUT/ncu/$name-details.txt" 2>&1
	"$NCU" --import "$OUT/ncu/$name.ncu-rep" --page source --print-source sass --csv >"$OUT/ncu/$name-sass.csv" 2>&1
}

# cuBLASLt's kernels run first in gemmalone; its first launch is algo 0.
[ -n "${NO_CUBLAS:-}" ] || profile cublaslt "regex:nvjet|sm90" "$(echo "$TILES" | cut -d, -f1)" "${CUBLAS_NCU_ARGS:-}"
IFS=, read -ra tiles <<<"$TILES"
for t in "${tiles[@]}"; do
	profile "ours-${DTYPE:-bf16}-$(echo "$t" | tr ':' '_')" hopper_gemm "$t" "${NCU_ARGS:-}"
done
ls -la "$OUT/ncu"
