#!/bin/bash
# bench/experiments/rs-epilogue.sh: the fused matmul + reduce-scatter with its own rows
# summed in the GEMM's epilogue (reduce=epilogue) against the reduction
# kernel after it (reduce=kernel), one call on W GPUs: per shape, every
# push x chunks x reduce on the shape's best tile (exhaustive; each trial
# checked against the float64 reference by the plugin), each trial's steps
# traced (SYMMTUNE_TRACE). symmtune.torch runs the same Go launch sequence
# (libsymmtune's GEMM runtime), so the plugin's checks cover it.
#   BIN=/tmp/bin OUT=$OUT W=2 bash bench/experiments/rs-epilogue.sh
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
W=${W:-2}
SPECS=${SPECS:-"4096x1792x4096/128x224:s5:c2:g4 8192x3584x8192/128x256:s4:c2:g8 16384x3584x8192/128x224:s5:c2:g4:cl2"}
here=$(dirname "$0")
LOGS=$OUT/rs-epilogue-w$W
. "$here/../lib.sh"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
mkdir -p "$LOGS/trace"
for spec in $SPECS; do
	SH=${spec%/*} TILE=${spec#*/}
	IFS=x read -r M N K <<<"$SH"
	SYMMTUNE_TRACE=$LOGS/trace timeout 150 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel matmulrs \
		--world "$W" --shape "m=$M,n=$N,k=$K" --dtype bf16 --iters 20 --warmup 5 --cache "$LOGS/configs.toml" \
		--strategy exhaustive --where "streams=1,algo=0,batch=0,graph=1,reduce_blocks=132,sm_reserve=0,impl=fused:$TILE" \
		--top 16 --log "$LOGS/rs-$SH.jsonl" >"$LOGS/rs-$SH.txt" 2>&1 || echo "search $SH: rc $?"
	grep -h "fused" "$LOGS/rs-$SH.txt" | grep -v winner | cut -c1-190 | sed "s/^/$SH /"
done
tar czf "$OUT/rs-epilogue-w$W.tgz" -C "$OUT" "rs-epilogue-w$W"
