#!/bin/bash
# bench/allreduce.sh: the all-reduce tables of README.md and docs/results.md
# on W GPUs, in one device call. Carry .gpu (scripts/gpu-bundle.sh) and run
# on the GPU machine:
#
#   bash bench/allreduce.sh W
#
# 1. `symmtune search` (pattern, 30 trials each) of the bf16 all-reduce at
#    every size the two tables time (4, 16 and 256 KiB, 1, 4, 16 and 128
#    MiB) into one cache: a size left out runs the nearest size's config,
#    which for an all-reduce can be far off (16 KiB on 4 x H100 ran the
#    4 KiB one-block config, 2026-11-28-h100x4-bench-gpu.md);
# 2. bench/torch_allreduce.py on that cache: symmtune.torch checked against
#    NCCL, then timed beside NCCL and torch symm_mem two-shot by the peer
#    method and queued, with the cache's tuned figure (README's table);
# 3. bench/torch_ops.py ar_graph on that cache: 20 calls per CUDA graph,
#    symmtune staged and in place beside NCCL and symm_mem one/two-shot
#    (the graph method's table).
# Writes $OUT/allreduce-wW/: the searches' logs, configs.toml,
# torch-allreduce.txt, ar-graph.txt, machine.txt. Its timeouts add up to
# less than one 600 s device call (python/tests/test_bench_scripts.py).
set -u
W=${1:?usage: bench/allreduce.sh WORLD}
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/allreduce-w$W
here=$(dirname "$0")
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
. "$here/lib.sh"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
for n in 2048 8192 131072 524288 2097152 8388608 67108864; do
	timeout 35 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel allreduce --world "$W" \
		--shape "n=$n" --dtype bf16 --strategy pattern --budget-trials 30 --cache "$LOGS/configs.toml" \
		--log "$LOGS/search-n$n.jsonl" >"$LOGS/search-n$n.txt" 2>&1 || echo "search n=$n: rc $?"
	grep -h "winner:" "$LOGS/search-n$n.txt" | cut -c1-160 | sed "s/^/n=$n /"
done
SYMMTUNE_CACHE=$LOGS/configs.toml timeout 150 torchrun --nproc-per-node "$W" "$here/torch_allreduce.py" \
	2048 524288 8388608 67108864 999999 >"$LOGS/torch-allreduce.txt" 2>&1 || echo "torch_allreduce: rc $?"
grep "^|\|^#\|^correctness\|FAIL" "$LOGS/torch-allreduce.txt"
SYMMTUNE_CACHE=$LOGS/configs.toml timeout 150 torchrun --nproc-per-node "$W" "$here/torch_ops.py" ar_graph \
	>"$LOGS/ar-graph.txt" 2>&1 || echo "torch_ops ar_graph: rc $?"
grep "^ar_graph\|FAIL" "$LOGS/ar-graph.txt"
