#!/bin/bash
# bench/experiments/gemm-gpu.sh: symmtune's GPU agmm and matmulrs against cuBLAS alone
# and their peers (NCCL + cuBLAS, torch's fused symm_mem ops), all in one
# call, since GPU clocks move between calls and only same-call ratios
# compare.
#
# For each world size: peer_baselines.py mm under torchrun (cuBLAS mm
# alone, agmm and mmrs peers), then `symmtune search --backend cuda` for
# each kernel and shape. Writes under $OUT (default bench/out): logs/ (trial
# logs, search output, peer CSVs, the cache, machine info), gemm-summary.md
# (bench/experiments/gemm_combine.py), gemm-report.html (plots, `symmtune report`) and
# gemm-logs.tgz.
#
# Runs where the GPUs are, with binaries built elsewhere (make cuda):
# bin/symmtune and bin/cuda/symmtune-plugin-{agmm,matmulrs}; the peer
# script at $PEERS (default .gpu/peer_baselines.py). Knobs: WORLDS, SHAPES
# (MxNxK, M the full row count), KERNELS, STRATEGY, BUDGET (trials per
# search), ITERS, WARMUP, EXTRA (more search flags), PEER_SHAPES_ONLY.
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-bin}
PEERS=${PEERS:-.gpu/peer_baselines.py}
WORLDS=${WORLDS:-"2 4"}
SHAPES=${SHAPES:-"4096x1792x4096 8192x3584x8192 16384x3584x8192"}
KERNELS=${KERNELS:-"agmm matmulrs"}
STRATEGY=${STRATEGY:-pattern}
BUDGET=${BUDGET:-40}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
EXTRA=${EXTRA:-}
LOGS=${LOGS:-$OUT/logs}
. "$(dirname "$0")/../lib.sh"
CACHE=$LOGS/configs.toml

for W in $WORLDS; do
	DEVS=$(seq -s, 0 $((W - 1)))
	echo "== world $W (CUDA_VISIBLE_DEVICES=$DEVS)"
	if [ -f "$PEERS" ]; then
		CUDA_VISIBLE_DEVICES=$DEVS timeout 400 torchrun --nproc-per-node "$W" "$PEERS" mm \
			>"$LOGS/peers-mm-w$W.csv" 2>"$LOGS/peers-mm-w$W.err" || echo "peers w$W failed: rc $?"
		grep -E "^(mm|agmm|mmrs)," "$LOGS/peers-mm-w$W.csv" | sed "s/^/w$W peer /"
	fi
	# cuBLAS alone on random inputs: peer_baselines.py's mm runs on a
	# never-written (zero) input, see bench/experiments/mm_baseline.py.
	CUDA_VISIBLE_DEVICES=$DEVS timeout 200 torchrun --nproc-per-node "$W" "$(dirname "$0")/mm_baseline.py" $SHAPES \
		>"$LOGS/peers-mmrand-w$W.csv" 2>"$LOGS/peers-mmrand-w$W.err" || echo "mm baseline w$W failed: rc $?"
	sed "s/^/w$W /" "$LOGS/peers-mmrand-w$W.csv"
	for SH in $SHAPES; do
		IFS=x read -r M N K <<<"$SH"
		for KER in $KERNELS; do
			L=$LOGS/search-$KER-w$W-$SH
			CUDA_VISIBLE_DEVICES=$DEVS timeout 300 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda \
				--kernel "$KER" --world "$W" --shape "m=$M,n=$N,k=$K" --dtype bf16 --iters "$ITERS" --warmup "$WARMUP" \
				--strategy "$STRATEGY" --budget-trials "$BUDGET" --log "$L.jsonl" --cache "$CACHE" $EXTRA \
				>"$L.txt" 2>&1 || echo "search $KER w$W $SH failed: rc $?"
			grep -h "winner:" "$L.txt" | sed "s/^/$KER w$W $SH /"
		done
	done
done
W1=$(echo $WORLDS | awk '{print $NF}')
for KER in $KERNELS; do
	SH=$(echo $SHAPES | awk '{print $NF}')
	IFS=x read -r M N K <<<"$SH"
	CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W1 - 1))) "$BIN/symmtune" lookup --plugin-dir "$BIN" --backend cuda --cache "$CACHE" \
		--kernel "$KER" --world "$W1" --dtype bf16 --shape "m=$M,n=$N,k=$K" --json >>"$LOGS/lookup.txt" 2>&1
done
cat "$LOGS/lookup.txt"
python3 "$(dirname "$0")/gemm_combine.py" "$LOGS" >"$OUT/gemm-summary.md"
write_report "$OUT/gemm-report.html"
tar czf "$OUT/gemm-logs.tgz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
cat "$OUT/gemm-summary.md"
