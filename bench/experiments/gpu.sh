#!/bin/bash
# bench/experiments/gpu.sh: symmtune's CUDA all-reduce against its peers on one GPU machine.
#
# For each world size: the peers (NCCL, torch symm_mem one/two-shot) through
# peer_baselines.py under torchrun, then `symmtune search --backend cuda` for
# bf16 all-reduce at each message size, then one `symmtune lookup`. Writes
# under $OUT (default bench/out): logs/ (trial logs landscape-*.jsonl, search
# output, peer CSVs, machine info), summary.md (the combined table, from
# bench/experiments/combine.py), report.html (plots, from `symmtune report`) and
# logs.tgz. LOGS overrides where the logs go.
#
# Runs where the GPUs are, with the binaries built elsewhere (make cuda):
#   bin/symmtune, bin/cuda/symmtune-plugin-allreduce, and the peer script at
#   $PEERS (default .gpu/peer_baselines.py). No Go toolchain needed there.
# Knobs: WORLDS="2 4", SIZES (bytes), ITERS, WARMUP, EXTRA (more search flags),
# BIG/BUDGET_BIG: sizes of BIG bytes or more get --budget-trials BUDGET_BIG
# (the strategy then samples; smaller sizes are searched exhaustively).
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-bin}
PEERS=${PEERS:-.gpu/peer_baselines.py}
WORLDS=${WORLDS:-"2 4"}
SIZES=${SIZES:-"4096 16384 65536 262144 1048576 4194304 16777216 67108864 134217728"}
ITERS=${ITERS:-50}
WARMUP=${WARMUP:-10}
EXTRA=${EXTRA:-}
BIG=${BIG:-67108864}
BUDGET_BIG=${BUDGET_BIG:-150}
LOGS=${LOGS:-$OUT/logs}
. "$(dirname "$0")/../lib.sh"
CACHE=$LOGS/configs.toml

for W in $WORLDS; do
	DEVS=$(seq -s, 0 $((W - 1)))
	echo "== world $W (CUDA_VISIBLE_DEVICES=$DEVS)"
	if [ -f "$PEERS" ]; then
		CUDA_VISIBLE_DEVICES=$DEVS timeout 300 torchrun --nproc-per-node "$W" "$PEERS" ar \
			>"$LOGS/peers-w$W.csv" 2>"$LOGS/peers-w$W.err" || echo "peers w$W failed: rc $?"
	fi
	for S in $SIZES; do
		N=$((S / 2))
		B=""
		[ "$S" -ge "$BIG" ] && B="--budget-trials $BUDGET_BIG"
		CUDA_VISIBLE_DEVICES=$DEVS timeout 280 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda \
			--kernel allreduce --world "$W" --shape "n=$N" --dtype bf16 --iters "$ITERS" --warmup "$WARMUP" \
			--log "$LOGS/landscape-cuda-allreduce-w$W-$S.jsonl" --cache "$CACHE" $B $EXTRA \
			>"$LOGS/search-w$W-$S.txt" 2>&1 || echo "search w$W $S failed: rc $?"
		grep -h "winner:" "$LOGS/search-w$W-$S.txt" | sed "s/^/w$W $S /"
	done
done
W1=$(echo $WORLDS | awk '{print $NF}')
CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W1 - 1))) "$BIN/symmtune" lookup --plugin-dir "$BIN" --backend cuda --cache "$CACHE" \
	--kernel allreduce --world "$W1" --dtype bf16 --shape n=524288 >"$LOGS/lookup.txt" 2>&1
cat "$LOGS/lookup.txt"
python3 "$(dirname "$0")/combine.py" "$LOGS" >"$OUT/summary.md"
write_report "$OUT/report.html"
tar czf "$OUT/logs.tgz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
cat "$OUT/summary.md"
