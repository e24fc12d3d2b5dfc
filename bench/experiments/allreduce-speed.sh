#!/bin/bash
# bench/experiments/allreduce-speed.sh: the CUDA all-reduce's large-message options
# against today's best config and NCCL at 16 MiB and 128 MiB of bf16, in
# one short GPU call (about 2-3 minutes; it stops starting searches once
# DEADLINE seconds have passed and caps each at 60 s: at most 4).
#
#   tar xzf .gpu/bins.tgz -C /tmp     # bins from scripts/gpu-bundle.sh
#   BIN=/tmp/bin LOGS=$OUT/speed WORLD=4 bash bench/experiments/allreduce-speed.sh
#
# 1. the peers (peer_baselines.py ar under torchrun: NCCL and torch
#    symm_mem at every power-of-two size; the table keeps 16 and 128 MiB);
# 2. per size, three `symmtune search --backend cuda` runs restricted with
#    --where (each also measures the size's default config first, and
#    checks every config on fresh random inputs against the float64
#    reference before timing it):
#      best     today's winner, pinned (bench/results/2026-11-21-h200x4.md)
#      overlap  two_shot_overlap: a pattern search over threads x blocks
#      ce_ag    two_shot_ce_ag: a pattern search over blocks x stages
# 3. bench/experiments/speed_table.py: per option its best config, µs, the link rate
#    each GPU achieved (two-shot traffic, 2*S*(W-1)/W bytes sent per GPU,
#    over the time) against the 386 GB/s copy-engine peak, and NCCL.
# Writes under $LOGS: speed-*.jsonl (trial logs), speed-*.txt (search
# output), peers-w$WORLD.csv, configs.toml, machine.txt, table.md.
# Knobs: ITERS, WARMUP, TRIALS_OV, TRIALS_CE, DEADLINE (seconds), PEERS.
set -u
BIN=${BIN:-bin}
WORLD=${WORLD:-4}
LOGS=${LOGS:-bench/out/speed}
PEERS=${PEERS:-.gpu/peer_baselines.py}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
TRIALS_OV=${TRIALS_OV:-16}
TRIALS_CE=${TRIALS_CE:-20}
DEADLINE=${DEADLINE:-180}
. "$(dirname "$0")/../lib.sh"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((WORLD - 1)))

if [ -f "$PEERS" ]; then
	timeout 100 torchrun --nproc-per-node "$WORLD" "$PEERS" ar \
		>"$LOGS/peers-w$WORLD.csv" 2>"$LOGS/peers-w$WORLD.err" || echo "peers failed: rc $?"
else
	echo "no peer script at $PEERS: NCCL column left empty"
fi

# search SIZE LABEL WHERE [more flags]: one restricted search, bounded by
# what is left of DEADLINE.
search() {
	local size=$1 label=$2 where=$3
	shift 3
	local left=$((DEADLINE - SECONDS))
	if [ "$left" -lt 15 ]; then
		echo "skipped $label at $size B: ${SECONDS}s of the ${DEADLINE}s deadline spent"
		return
	fi
	local L=$LOGS/speed-$size-$label
	timeout "$((left < 60 ? left : 60))" "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel allreduce \
		--world "$WORLD" --shape "n=$((size / 2))" --dtype bf16 --iters "$ITERS" --warmup "$WARMUP" \
		--where "$where" --log "$L.jsonl" --cache "$LOGS/configs.toml" "$@" >"$L.txt" 2>&1 ||
		echo "search $label at $size B: rc $?"
	echo "$size $label ($((SECONDS))s): $(grep -h 'winner:' "$L.txt" | cut -c1-120)"
}

M16=16777216
M128=134217728
search $M16 best algorithm=two_shot_push,blocks=132,threads=512,unroll=1,stages=1
search $M16 overlap algorithm=two_shot_overlap,unroll=1,stages=1 --budget-trials "$TRIALS_OV"
search $M16 ce_ag algorithm=two_shot_ce_ag,threads=512,unroll=1 --budget-trials "$TRIALS_CE"
search $M128 best algorithm=two_shot_push,blocks=264,threads=128,unroll=2,stages=1
search $M128 overlap algorithm=two_shot_overlap,unroll=2,stages=1 --budget-trials "$TRIALS_OV"
search $M128 ce_ag algorithm=two_shot_ce_ag,threads=512,unroll=2 --budget-trials "$TRIALS_CE"

python3 "$(dirname "$0")/speed_table.py" "$LOGS" "$WORLD" | tee "$LOGS/table.md"
echo "elapsed ${SECONDS}s"
