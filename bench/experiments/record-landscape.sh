#!/bin/bash
# bench/experiments/record-landscape.sh: records a GPU landscape (a trial log that
# tuner/strategy's replays score strategies on) of one GEMM job on W GPUs.
# Carry .gpu (scripts/gpu-bundle.sh) and run on the GPU machine:
#
#   bash bench/experiments/record-landscape.sh W KERNEL SHAPE PATTERN_TRIALS RANDOM_SECONDS
#
# Two searches into one log: pattern search first (PATTERN_TRIALS trials:
# it finds the region of the winners, so they are in the sample), then
# random sampling for RANDOM_SECONDS (uniform over the valid configs: the
# largest sample the device time allows, exhaustive being hours). Both
# measure the default first. The log lands in
# $OUT/landscape-cuda-KERNEL-wW-SHAPE.jsonl, ready for tuner/testdata;
# there, one over about 300 KB is stored as gzip -9n makes it (NAME.jsonl.gz,
# read as the plain log) to keep the tree small for the GPU machines.
set -u
W=${1:?usage: record-landscape.sh W KERNEL SHAPE PATTERN_TRIALS RANDOM_SECONDS}
K=$2 SHAPE=$3 PT=$4 RS=$5
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
mkdir -p "$OUT"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
tag=$(echo "$SHAPE" | tr -d ',=')
log=$OUT/landscape-cuda-$K-w$W-$tag.jsonl
run() { # strategy, then budget flags
	local s=$1
	shift
	"$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel "$K" --world "$W" --shape "$SHAPE" \
		--dtype bf16 --strategy "$s" "$@" --cache "$OUT/landscape-configs.toml" --log "$OUT/part-$K-$s.jsonl" \
		>"$OUT/landscape-$K-$s.txt" 2>&1 || echo "search $K $s: rc $?"
	grep -h "winner:\|time split\|trials" "$OUT/landscape-$K-$s.txt" | cut -c1-220 | sed "s/^/$K $s: /"
}
run pattern --budget-trials "$PT"
run random --budget-trials 100000 --budget-time "${RS}s" --seed 1
cat "$OUT/part-$K-pattern.jsonl" "$OUT/part-$K-random.jsonl" >"$log"
echo "$log: $(wc -l <"$log") lines"
