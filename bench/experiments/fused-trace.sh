#!/bin/bash
# bench/experiments/fused-trace.sh: where a fused call's time goes at one shape. Each
# fused config is pinned (every parameter) and searched on WORLD GPUs and,
# for the GEMM alone through the same plugin path, on 1 GPU (no peers: no
# copies, flags or reduction), with SYMMTUNE_TRACE set: every trial times
# one more call step by step with CUDA events (the fused GEMM, the copies,
# the reductions, the end barrier; kernels/gemm/gpu/trace_cuda.go). The
# steps of the fused config's traced calls are printed per rank, after
# the trials' medians.
#
#   BIN=/tmp/bin WORLD=2 SHAPE=8192x3584x8192 DTYPE=bf16 OUT=bench/out bash bench/experiments/fused-trace.sh
#
# CONFIGS: "kernel|where" entries, one per line; the default traces the
# 8192 winners of 2026-11-23-h200x2-gemm-fused8.md.
set -u
BIN=${BIN:-/tmp/bin}
WORLD=${WORLD:-2}
SHAPE=${SHAPE:-8192x3584x8192}
DTYPE=${DTYPE:-bf16}
OUT=${OUT:-bench/out}
LOGS=$OUT/fused-trace
here=$(dirname "$0")
. "$here/../lib.sh"
AG=algo=0,batch=0,copy=ce,copy_blocks=4,direction=push,graph=0,sm_reserve=0,streams=1
RS=algo=0,batch=0,push=ce,graph=0,sm_reserve=0,streams=1
CONFIGS=${CONFIGS:-"agmm|$AG,chunks=2,impl=fused:128x256:s4:c2:g4
matmulrs|$RS,reduce_blocks=264,chunks=2,reduce=kernel,impl=fused:128x256:s4:c2:g4
matmulrs|$RS,reduce_blocks=132,chunks=2,reduce=epilogue,impl=fused:128x256:s4:c2:g4"}
IFS=x read -r M N K <<<"$SHAPE"
i=0
while IFS='|' read -r KER WHERE; do
	[ -n "$KER" ] || continue
	for W in "$WORLD" 1; do
		i=$((i + 1))
		where=$WHERE
		# One rank: one chunk, and no reduction to do in an epilogue.
		[ "$W" = 1 ] && where=$(echo "$WHERE" | sed 's/chunks=[0-9]*/chunks=1/; s/reduce=epilogue/reduce=kernel/')
		dir=$LOGS/$i-$KER-w$W
		mkdir -p "$dir"
		CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1))) SYMMTUNE_TRACE=$dir timeout 120 "$BIN/symmtune" search \
			--plugin-dir "$BIN" --backend cuda --kernel "$KER" --world "$W" --shape "m=$M,n=$N,k=$K" --dtype "$DTYPE" \
			--strategy pattern --budget-trials 3 --where "$where" --cache "$dir/configs.toml" --log "$dir/search.jsonl" \
			>"$dir/search.txt" 2>&1 || echo "$KER w$W: rc $?"
		echo "## $KER w$W $SHAPE $where"
		python3 - "$dir/search.jsonl" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    c = r["config"]
    print(f"  trial {r['status']} {r.get('score_us', 0):.1f} µs (min {r.get('min_us', 0):.1f}) {c['impl']} chunks={c['chunks']}"
          f"{' default' if r.get('default') else ''}")
EOF
		for f in "$dir"/trace-*.txt; do
			[ -f "$f" ] || continue
			echo "  $(basename "$f"): the pinned config's traced calls (µs from the call's start, duration)"
			# Each traced call starts with "== config" (see traceCall).
			awk 'index($0, "== ") == 1 {keep = index($0, "impl=fused") > 0} keep {print "    " $0}' "$f" | tail -n 24
		done
	done
done <<<"$CONFIGS"
