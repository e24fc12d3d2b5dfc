#!/bin/bash
# bench/search-check.sh: a time-budgeted search as a user runs it, and
# whether the tuner's scores order configs as a torch program does (issue
# 44). Carry .gpu (scripts/gpu-bundle.sh) and run on the GPU machine:
#
#   bash bench/search-check.sh W
#
# For each kernel of KERNELS (default agmm matmulrs) at each of SHAPES
# (MxNxK, default 8192x3584x8192), of DTYPE (default bf16; e4m3, e4m3_row):
#   1. `symmtune search --budget-time BUDGET_TIME` (default 60s, the default
#      strategy), its wall time;
#   2. the search's winner, its BEST (default 0) best configs, the best of
#      TOP (default 5) of its implementations and its best pipeline, plus
#      the REF_N (default 5) best of a reference log: REF_LOG, else the
#      recorded exhaustive landscape tuner/testdata/landscape-cuda-K-wW-
#      mMnNkK.jsonl (bf16) or landscape-cuda-K-DTYPE-wW-mMnNkK.jsonl, or
#      the same name with .gz (the large ones are stored gzipped; the
#      reader takes either), where one exists; re-measured in the
#      tuner once per trial timing of MODES (default "barrier stream":
#      SYMMTUNE_TRIAL_TIMING, see symm/cudamem/timing.go; "" for none);
#   3. the same configs in a torch program (bench/torch_paired.py --configs:
#      interleaved with the product alone (mm, or _scaled_mm) and torch's
#      fused op, ratio to the product alone; TOGETHER=1: all of them in the
#      same rounds, --together, with the untuned config, --untuned), then,
#      unless CHOICE=0, symmtune.torch's own choice untuned (no cache) and
#      from the search's cache, in torchruns of their own (bf16 only);
#   4. the table (bench/search_check.py): each source's order against the
#      program's, and the search winner's distance from the best in the
#      program; with TOGETHER=1 also issue 44's summary row (winner and
#      untuned against the best measured beside them, and the wall time)
#      in summary.md.
# QUEUED=1 queues each of the program's calls behind a device sleep
# (torch_paired.py --queued): for calls of ~100 µs or less, whose unqueued
# events time the host's launch path rather than the GPU's work (at 256 x
# 8192 x 8192 one config measured 1.7x and 0.93x mm in the same rounds,
# forced and untuned: bench/results/2026-12-03-h200-search-order-loaded-refine.md).
# SEARCH_ARGS adds flags to step 1's search (e.g. "--finalists 10
# --refine-timing loaded"); the table's "search refined" column is the
# search's own re-measurements (its finalists), where it made any.
# SEARCH_FROM=DIR skips step 1 and re-checks the search DIR holds for each
# cell (search-CELL.jsonl or .jsonl.xz, .toml, .txt, as this script writes
# them; its wall time from the .txt's time line) against a new REF_LOG.
# Writes $OUT/search-check-wW/ and, for the device tool's few files,
# $OUT/search-check-wW.tgz of it. About 3 minutes per cell at W=2.
set -u
W=${1:?usage: bench/search-check.sh WORLD}
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/search-check-w$W
KERNELS=${KERNELS:-agmm matmulrs}
SHAPES=${SHAPES:-8192x3584x8192}
MODES=${MODES-barrier stream}
DTYPE=${DTYPE:-bf16}
here=$(dirname "$0")
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
. "$here/lib.sh"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
for k in $KERNELS; do
	for s in $SHAPES; do
		cell=$k-$DTYPE-$s
		shape=$(echo "$s" | awk -Fx '{printf "m=%s,n=%s,k=%s", $1, $2, $3}')
		common=(--plugin-dir "$BIN" --backend cuda --kernel "$k" --world "$W" --shape "$shape" --dtype "$DTYPE")
		ref=${REF_LOG:-}
		tag=$k-$DTYPE
		[ "$DTYPE" = bf16 ] && tag=$k
		landscape=$here/../tuner/testdata/landscape-cuda-$tag-w$W-$(echo "$s" | awk -Fx '{printf "m%sn%sk%s", $1, $2, $3}').jsonl
		[ -f "$landscape" ] || landscape=$landscape.gz
		[ -z "$ref" ] && [ -f "$landscape" ] && ref=$landscape
		if [ -n "${SEARCH_FROM:-}" ]; then
			# An earlier run's search, re-checked against a new reference:
			# its wall time is the search's own time line.
			cp "$SEARCH_FROM/search-$cell.txt" "$SEARCH_FROM/search-$cell.toml" "$LOGS/" || continue
			if [ -f "$SEARCH_FROM/search-$cell.jsonl.xz" ]; then
				xz -dc "$SEARCH_FROM/search-$cell.jsonl.xz" >"$LOGS/search-$cell.jsonl"
			else
				cp "$SEARCH_FROM/search-$cell.jsonl" "$LOGS/" || continue
			fi
			wall=$(grep -ho "trials: .*; [0-9.]*s" "$LOGS/search-$cell.txt" | sed 's/.*; \([0-9.]*\)s/\1/' | awk '{printf "%.0f", $1}')
		else
			start=$(date +%s.%N)
			# shellcheck disable=SC2086 # SEARCH_ARGS: more search flags, split on spaces
			timeout 150 "$BIN/symmtune" search "${common[@]}" --budget-time "${BUDGET_TIME:-60s}" ${SEARCH_ARGS:-} \
				--cache "$LOGS/search-$cell.toml" --log "$LOGS/search-$cell.jsonl" >"$LOGS/search-$cell.txt" 2>&1 ||
				echo "search $cell: rc $?"
			wall=$(awk "BEGIN{printf \"%.0f\", $(date +%s.%N) - $start}")
		fi
		echo "$cell: search wall $wall s; $(grep -h "winner:" "$LOGS/search-$cell.txt" | cut -c1-160)"
		python3 "$here/search_check.py" top "$LOGS/search-$cell.jsonl" "$LOGS/search-$cell.toml" "$k" "$s" --n "${TOP:-5}" --best "${BEST:-0}" \
			--dtype "$DTYPE" ${ref:+--ref "$ref" --ref-n "${REF_N:-5}"} \
			>"$LOGS/top-$cell.json" 2>"$LOGS/top-$cell.txt" || { echo "top $cell failed"; continue; }
		remeasured=()
		for mode in $MODES; do
			log=$LOGS/$mode-$cell.jsonl
			rm -f "$log"
			while read -r c; do
				SYMMTUNE_TRIAL_TIMING=$mode timeout 60 "$BIN/symmtune" search "${common[@]}" --where "$c" --budget-trials 0 \
					--iters 30 --warmup 3 --no-transfer --cache "$LOGS/remeasure.toml" --log "$LOGS/one.jsonl" >/dev/null 2>&1 ||
					echo "remeasure $mode $c: rc $?"
				cat "$LOGS/one.jsonl" >>"$log" && rm -f "$LOGS/one.jsonl"
			done <"$LOGS/top-$cell.txt"
			remeasured+=("$log")
		done
		together=()
		[ "${TOGETHER:-0}" = 1 ] && together=(--together --untuned)
		[ "${QUEUED:-0}" = 1 ] && together+=(--queued)
		timeout 240 torchrun --nproc-per-node "$W" "$here/torch_paired.py" --configs "$LOGS/top-$cell.json" "${together[@]}" \
			--rounds 30 --json "$LOGS/program-$cell.json" 2>&1 | grep -v "Warning\|warnings.warn" >"$LOGS/program-$cell.txt" ||
			echo "torch_paired $cell: rc $?"
		[ "${TOGETHER:-0}" = 1 ] && python3 "$here/search_check.py" summary "$LOGS/program-$cell.json" "$wall" |
			tee -a "$LOGS/summary.md"
		[ "${CHOICE:-1}" = 0 ] || [ "$DTYPE" != bf16 ] || for cache in none search; do
			c=/nonexistent/symmtune-cache.toml
			[ "$cache" = search ] && c=$LOGS/search-$cell.toml
			SYMMTUNE_CACHE=$c timeout 120 torchrun --nproc-per-node "$W" "$here/torch_paired.py" --tuned "$s" --kernels "$k" \
				--rounds 30 2>&1 | grep "^| 2 " | sed "s/^/$cache cache: /"
		done | tee "$LOGS/choice-$cell.txt"
		python3 "$here/search_check.py" table "$LOGS/top-$cell.json" "$LOGS/program-$cell.json" \
			"$LOGS/search-$cell.jsonl" "${remeasured[@]}" | tee "$LOGS/table-$cell.md"
	done
done
tar czf "$LOGS.tgz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
