#!/bin/bash
# bench/experiments/gemm-fused.sh: the fused GEMM (impl=fused) against the pipelined
# impl, cuBLAS alone and the peers, all in one call (clocks move between
# calls, so only same-call ratios compare):
#   1. bench/gemmalone on GPU 0: the Hopper GEMM alone against cuBLASLt
#      (its top four algorithms, the best re-timed around each tile);
#   2. per world size: peer_baselines.py mm (NCCL + cuBLAS, torch's fused
#      ops) and bench/experiments/mm_baseline.py (cuBLAS on random inputs), then per
#      kernel and shape two searches: the whole space (pattern, BUDGET
#      trials; what a user's search does), and the fused impl on its own
#      parameters (the pipeline-only ones at their defaults; FUSED=0 skips
#      it).
# WARM (symmtune search --warm, default 0) times every trial after that
# long of back-to-back calls: at the clock the GPUs hold under sustained
# load (bench/results/2026-11-24-h200x2-epilogue-warm.md; off by default: it
# picked worse matmulrs configs there). 1s makes each search about a
# minute longer.
# Writes $LOGS (trial logs, peers CSVs, configs.toml, gemmalone.csv) and
# $OUT/gemm-fused-summary.md (bench/experiments/gemm_combine.py).
#   tar xzf .gpu/bins.tgz -C /tmp   # scripts/gpu-bundle.sh (with gemmalone)
#   BIN=/tmp/bin OUT=$OUT WORLDS=2 bash bench/experiments/gemm-fused.sh
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-bin}
PEERS=${PEERS:-.gpu/peer_baselines.py}
WORLDS=${WORLDS:-"2 4"}
SHAPES=${SHAPES:-"4096x1792x4096 8192x3584x8192 16384x3584x8192"}
KERNELS=${KERNELS:-"agmm matmulrs"}
ALONE=${ALONE:-1} # 0: skip the GEMM alone (step 1)
BUDGET=${BUDGET:-30}
BUDGET_FUSED=${BUDGET_FUSED:-40}
FUSED=${FUSED:-1}
WARM=${WARM:-0}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
# The GEMM-alone tiles: the searched ones (kernels/gemm/hopper/searched.json).
TILES=${TILES:-$(python3 -c 'import json, sys; print(",".join(json.load(open(sys.argv[1]))["searched"]))' "$(dirname "$0")/../../kernels/gemm/hopper/searched.json")}
LOGS=${LOGS:-$OUT/logs}
. "$(dirname "$0")/../lib.sh"
CACHE=$LOGS/configs.toml
FIX_AG=streams=1,algo=0,batch=0,graph=1,copy=ce,copy_blocks=4,sm_reserve=0
FIX_RS=streams=1,algo=0,batch=0,graph=1,push=ce,reduce_blocks=132

[ "$ALONE" = 1 ] && { CUDA_VISIBLE_DEVICES=0 timeout 120 "$BIN/gemmalone" -shapes "$(echo $SHAPES | tr ' ' ,)" -tiles "$TILES" \
	>"$LOGS/gemmalone.csv" 2>"$LOGS/gemmalone.err" || echo "gemmalone failed: rc $?"; }
for W in $WORLDS; do
	export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
	if [ -f "$PEERS" ]; then
		timeout 300 torchrun --nproc-per-node "$W" "$PEERS" mm >"$LOGS/peers-mm-w$W.csv" 2>"$LOGS/peers-mm-w$W.err" || echo "peers w$W failed: rc $?"
	fi
	timeout 120 torchrun --nproc-per-node "$W" "$(dirname "$0")/mm_baseline.py" $SHAPES \
		>"$LOGS/peers-mmrand-w$W.csv" 2>"$LOGS/peers-mmrand-w$W.err" || echo "mm baseline w$W failed: rc $?"
	for SH in $SHAPES; do
		IFS=x read -r M N K <<<"$SH"
		for KER in $KERNELS; do
			FIX=$FIX_AG
			[ $KER = matmulrs ] && FIX=$FIX_RS
			common=(--plugin-dir "$BIN" --backend cuda --kernel "$KER" --world "$W" --shape "m=$M,n=$N,k=$K" --dtype bf16
				--iters "$ITERS" --warmup "$WARMUP" --warm "$WARM" --cache "$CACHE")
			timeout 150 "$BIN/symmtune" search "${common[@]}" --strategy pattern --budget-trials "$BUDGET" \
				--log "$LOGS/search-$KER-w$W-$SH.jsonl" >"$LOGS/search-$KER-w$W-$SH.txt" 2>&1 || echo "search $KER w$W $SH: rc $?"
			[ "$FUSED" = 1 ] && { timeout 150 "$BIN/symmtune" search "${common[@]}" --strategy pattern --budget-trials "$BUDGET_FUSED" --where "$FIX" \
				--log "$LOGS/fused-$KER-w$W-$SH.jsonl" >"$LOGS/fused-$KER-w$W-$SH.txt" 2>&1 || echo "fused search $KER w$W $SH: rc $?"; }
			grep -h "winner:" "$LOGS/search-$KER-w$W-$SH.txt" "$LOGS/fused-$KER-w$W-$SH.txt" 2>/dev/null | cut -c1-200 | sed "s/^/$KER w$W $SH /"
		done
	done
done
python3 "$(dirname "$0")/gemm_combine.py" "$LOGS" >"$OUT/gemm-fused-summary.md"
tar czf "$OUT/gemm-fused-logs.tgz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
cat "$OUT/gemm-fused-summary.md"
