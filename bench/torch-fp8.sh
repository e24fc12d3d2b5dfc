#!/bin/bash
# bench/torch-fp8.sh: symmtune.torch's FP8 GEMMs (issue 30) on W GPUs with
# tuned configs. Carry .gpu (scripts/gpu-bundle.sh) and run on the GPU machine:
#
#   bash bench/torch-fp8.sh W [PARTS...]
#
# Tunes, with `symmtune search` (pattern, $TRIALS trials each, default 20,
# $SEARCH_S seconds at most each, default 40) into one cache ($CACHE,
# default /tmp/torch-fp8-wW.toml: it outlives one device call on a warm
# machine), agmm and matmulrs at $SHAPES (MxNxK, M the gathered/total rows;
# default 8192x3584x8192 16384x3584x8192 4096x1792x4096) for each dtype of
# $DTYPES (default "e4m3 e4m3_row"); then runs bench/torch_fp8.py PARTS
# (default check graph time) under torchrun on that cache. The 12 default
# searches take up to 8 minutes, so where one device call allows 10, split:
# BENCH=0 searches only, NO_SEARCH=1 benchmarks on the cache an earlier call
# left. WHERE_agmm / WHERE_matmulrs restrict that kernel's searches
# (--where). Everything lands under $OUT/torch-fp8-wW (the cache copied there).
set -u
W=${1:?usage: bench/torch-fp8.sh WORLD [check] [graph] [time]}
shift
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/torch-fp8-w$W
CACHE=${CACHE:-/tmp/torch-fp8-w$W.toml}
here=$(dirname "$0")
mkdir -p "$LOGS"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
export PYTHONPATH=$here/../python:$here PYTHONUNBUFFERED=1
export SYMMTUNE_LIB=${SYMMTUNE_LIB:-$(dirname "$BIN")/python/symmtune/libsymmtune.so}
# Never multicast: torch symm_mem, NCCL and NVSHMEM alike.
export TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
SHAPES=${SHAPES-8192x3584x8192 16384x3584x8192 4096x1792x4096}
search() { # kernel shape dtype
	local shape tag where=WHERE_$1
	shape=$(echo "$2" | awk -Fx '{printf "m=%s,n=%s,k=%s", $1, $2, $3}')
	tag=$1-$3-$2
	timeout "${SEARCH_S:-40}" "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel "$1" --world "$W" \
		--shape "$shape" --dtype "$3" --strategy pattern --budget-trials "${TRIALS:-20}" --where "${!where:-}" --cache "$CACHE" \
		--log "$LOGS/search-$tag.jsonl" >"$LOGS/search-$tag.txt" 2>&1 || echo "search $1 $2 $3: rc $?"
	grep -h "winner:" "$LOGS/search-$tag.txt" | cut -c1-200 | sed "s/^/$1 $2 $3 /"
}
if [ -z "${NO_SEARCH:-}" ]; then
	for dt in ${DTYPES:-e4m3 e4m3_row}; do
		for s in $SHAPES; do
			search agmm "$s" "$dt"
			search matmulrs "$s" "$dt"
		done
	done
fi
[ -f "$CACHE" ] && cp "$CACHE" "$LOGS/configs.toml"
[ "${BENCH:-1}" = 0 ] && exit 0
SYMMTUNE_CACHE=$CACHE timeout 420 torchrun --nproc-per-node "$W" "$here/torch_fp8.py" "$@" \
	--shapes "$(echo "$SHAPES" | tr ' ' ',')" 2>&1 |
	grep -v "UserWarning\|warnings.warn\|_pipeline(gemm" | tee "$LOGS/torch-fp8.txt"
