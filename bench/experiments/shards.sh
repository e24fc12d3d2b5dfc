#!/usr/bin/env bash
# bench/experiments/shards.sh: wall time of one job file tuned as 1, 2, 4, ... shards run
# at the same time on this machine, each shard into its own cache file, then
# merged with `symmtune cache merge`. Usage:
#
#   make build && bench/experiments/shards.sh [JOBFILE] [SHARD COUNTS...]
#
# (default: configs/fleet-cpu.toml 1 2 4). Results go to $OUT (default a new
# temp directory): per count, each shard's output and cache, the merged
# cache and its report. On a machine with fewer cores than ranks × shards the
# shards compete for the cores: the times say how the file splits, not how a
# fleet of separate nodes would scale.
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=${1:-configs/fleet-cpu.toml}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 2 4)
OUT=${OUT:-$(mktemp -d /tmp/symmtune-shards.XXXXXX)}
bin=bin/symmtune
echo "job file $jobs; $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ); results in $OUT"
for n in "${counts[@]}"; do
	d=$OUT/$n-shards
	mkdir -p "$d"
	start=$(date +%s.%N)
	pids=()
	for k in $(seq 1 "$n"); do
		SYMMTUNE_CACHE= "$bin" search --config "$jobs" --shard "$k/$n" --cache "$d/shard$k.toml" \
			--log "$d/shard$k.jsonl" >"$d/shard$k.out" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || echo "a shard failed: see $d/shard*.out"; done
	searched=$(date +%s.%N)
	"$bin" cache merge "$d/merged.toml" "$d"/shard*.toml >"$d/merge.out"
	merged=$(date +%s.%N)
	per_shard=$(for k in $(seq 1 "$n"); do grep -o '[0-9]* of the [0-9]* jobs' "$d/shard$k.out" | cut -d' ' -f1; done | paste -sd+)
	awk -v n="$n" -v a="$start" -v b="$searched" -v c="$merged" -v js="$per_shard" -v m="$(head -1 "$d/merge.out")" \
		'BEGIN { printf "%d shard(s): search %.1f s (jobs per shard %s), merge %.2f s; %s\n", n, b - a, js, c - b, m }'
done
