#!/bin/bash
# bench/gemm-paired.sh: the bf16 fused-GEMM table of README.md (time over
# cuBLAS mm alone, paired) on W GPUs, in one device call. Carry .gpu
# (scripts/gpu-bundle.sh) and run on the GPU machine:
#
#   bash bench/gemm-paired.sh W
#
# Searches agmm and matmulrs (bf16, pattern, BUDGET trials each, default 30)
# at SHAPES (MxNxK, M the full row count; default 8192x3584x8192
# 16384x3584x8192) into one cache, then bench/torch_paired.py --tuned on it:
# cuBLAS mm, symmtune.torch's choice and torch's fused symm_mem op
# interleaved call by call, each round's ratio to mm alone, two passes.
# PINNED=1 skips the searches and times torch_paired.py's own list, the
# configs of the README's table (the best of 2 x H200 on 2026-11-23).
# QUEUED=1 queues each call behind a barrier and a device sleep. Writes
# $OUT/gemm-paired-wW/: the searches' logs, configs.toml, paired.txt. Its
# timeouts add up to less than one 600 s device call
# (python/tests/test_bench_scripts.py). The FP8 table: bench/torch-fp8.sh.
set -u
W=${1:?usage: bench/gemm-paired.sh WORLD}
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/gemm-paired-w$W
SHAPES=${SHAPES:-8192x3584x8192 16384x3584x8192}
here=$(dirname "$0")
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
. "$here/lib.sh"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
args=()
[ "${QUEUED:-0}" = 1 ] && args+=(--queued)
if [ "${PINNED:-0}" != 1 ]; then
	for k in agmm matmulrs; do
		for s in $SHAPES; do
			shape=$(echo "$s" | awk -Fx '{printf "m=%s,n=%s,k=%s", $1, $2, $3}')
			timeout 90 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel "$k" --world "$W" \
				--shape "$shape" --dtype bf16 --strategy pattern --budget-trials "${BUDGET:-30}" \
				--cache "$LOGS/configs.toml" --log "$LOGS/search-$k-$s.jsonl" >"$LOGS/search-$k-$s.txt" 2>&1 ||
				echo "search $k $s: rc $?"
			grep -h "winner:" "$LOGS/search-$k-$s.txt" | cut -c1-200 | sed "s/^/$k $s /"
		done
	done
	args+=(--tuned "$(echo "$SHAPES" | tr ' ' ',')")
fi
SYMMTUNE_CACHE=$LOGS/configs.toml timeout 200 torchrun --nproc-per-node "$W" "$here/torch_paired.py" "${args[@]}" 2>&1 |
	grep -v "UserWarning\|warnings.warn\|FutureWarning" >"$LOGS/paired.txt" || echo "torch_paired: rc $?"
grep "^|\|FAIL" "$LOGS/paired.txt"
