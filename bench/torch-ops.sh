#!/bin/bash
# bench/torch-ops.sh: symmtune's registered torch ops on W GPUs with tuned
# configs. Carry .gpu (scripts/gpu-bundle.sh) and run on the GPU machine:
#
#   bash bench/torch-ops.sh W [PARTS...]
#
# Tunes, with `symmtune search` (pattern, 30 trials each) into one cache:
# the all-reduce at the decode step's sizes ([B, 8192] bf16 for B = 1, 16,
# 64, 256) and agmm and matmulrs at $GEMM_SHAPES (default m=4096,n=1792,k=4096; empty: none);
# then runs bench/torch_ops.py (PARTS, default check compile host decode)
# on that cache. Then the tensor-parallel block's loop (bench/tp-loop.sh:
# the block untuned while recording its shapes, `symmtune search --config`
# of the recorded file with TP_BUDGET, default --budget-trials 12
# --budget-time 20s per job, then the block on that cache). RECORDED=FILE
# takes that recorded file instead of the untuned run; TP=0 skips the
# block; AR_BATCHES (default "1 16 64 256", empty: none) sets the
# all-reduce searches. Before the block, bench/torch_edge.py (a rank 3 s
# late, bad input; EDGE=0 skips it). Everything lands under $OUT/torch-ops-wW.
# LAMPORT=1 also searches the all-reduce sizes for each algorithm of
# LAMPORT_ALGOS (default: both Lamport ones, one_shot_lamport and
# two_shot_lamport), with --where algorithm=ALGO into $LOGS/ALGO.toml, and
# runs each cache's configs as forced rows named ALGO (bench/ar_force.py:
# AR_FORCE=ALGO=FILE;..., unless AR_FORCE is set): check's all_reduce
# cases, decode's ALGO_staged and ALGO_inplace beside symmtune's own and
# NCCL, every algorithm in the same run. Each algorithm's searches take up
# to 40 s per size. TORCH_OPS_TIMEOUT (default 300 s) bounds torch_ops.py.
set -u
W=${1:?usage: bench/torch-ops.sh WORLD [check] [compile] [host] [decode]}
shift
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/torch-ops-w$W
here=$(dirname "$0")
mkdir -p "$LOGS"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
export PYTHONPATH=$here/../python:$here PYTHONUNBUFFERED=1
export SYMMTUNE_LIB=${SYMMTUNE_LIB:-$(dirname "$BIN")/python/symmtune/libsymmtune.so}
search() { # kernel shape timeout [cache [tag-prefix [more search arguments...]]]
	local tag cache=${4:-$LOGS/configs.toml} k=$1 shape=$2 t=$3
	tag=${5:-}$1-$(echo "$2" | tr ',=' '_-')
	shift 5 2>/dev/null || shift $#
	timeout "$t" "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel "$k" --world "$W" \
		--shape "$shape" --dtype bf16 --strategy pattern --budget-trials 30 --cache "$cache" \
		--log "$LOGS/search-$tag.jsonl" "$@" >"$LOGS/search-$tag.txt" 2>&1 || echo "search $k $shape: rc $?"
	grep -h "winner:" "$LOGS/search-$tag.txt" | cut -c1-200 | sed "s/^/$k $shape /"
}
LAMPORT_ALGOS=${LAMPORT_ALGOS:-one_shot_lamport two_shot_lamport}
if [ -n "${LAMPORT:-}" ]; then
	force=
	for a in $LAMPORT_ALGOS; do force="$force${force:+;}$a=$LOGS/$a.toml"; done
	export AR_FORCE=${AR_FORCE:-$force}
fi
if [ -z "${NO_SEARCH:-}" ]; then
	for b in ${AR_BATCHES-1 16 64 256}; do search allreduce "n=$((b * 8192))" 40; done
	if [ -n "${LAMPORT:-}" ]; then
		for a in $LAMPORT_ALGOS; do
			for b in ${AR_BATCHES-1 16 64 256}; do
				search allreduce "n=$((b * 8192))" 40 "$LOGS/$a.toml" "$a-" --where "algorithm=$a"
			done
		done
	fi
	for s in ${GEMM_SHAPES-m=4096,n=1792,k=4096}; do
		search agmm "$s" 90
		search matmulrs "$s" 90
	done
fi
SYMMTUNE_CACHE=$LOGS/configs.toml timeout "${TORCH_OPS_TIMEOUT:-300}" torchrun --nproc-per-node "$W" "$here/torch_ops.py" "$@" 2>&1 |
	grep -v "UserWarning\|warnings.warn\|_prepare(tensor\|_pipeline(gemm" | tee "$LOGS/torch-ops.txt"
# A rank 3 s late, and bad input (bench/torch_edge.py); EDGE=0 skips it.
if [ "${EDGE:-1}" != 0 ]; then
	SYMMTUNE_CACHE=$LOGS/configs.toml timeout 120 torchrun --nproc-per-node "$W" "$here/torch_edge.py" 3 2>&1 |
		grep -v "UserWarning\|warnings.warn\|FutureWarning" >"$LOGS/torch-edge.txt" || echo "torch_edge: rc $?"
	grep "FAIL" "$LOGS/torch-edge.txt" || echo "torch_edge: no FAIL lines"
fi
[ "${TP:-1}" = 0 ] && exit 0
# The TP block's loop: record, search, run (bench/tp-loop.sh, which reads
# RECORDED and TP_BUDGET).
LOGS=$LOGS bash "$here/tp-loop.sh" "$W"
