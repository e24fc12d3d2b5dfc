#!/bin/bash
# bench/experiments/allreduce-odd.sh: the CUDA all-reduce at sizes that are not whole
# vectors (and f16, f32, bf16), on GPUs. Every trial of a search is checked
# against the float64 reference (fresh random inputs, poisoned outputs),
# so a short random search per (dtype, size) checks a spread of configs of
# every algorithm. Prints one line per search: the statuses of its trials
# and the winner; exits 1 if any trial was wrong or failed. The plots of
# the searches go to $LOGS/report.html.
#
#   WORLD=2 BIN=bin bash bench/experiments/allreduce-odd.sh
set -u
BIN=${BIN:-bin}
WORLD=${WORLD:-2}
SIZES=${SIZES:-"1 3 7 4097 1000001 999999 3145735 7777777 12345 65537"}
DTYPES=${DTYPES:-"bf16 f16 f32"}
TRIALS=${TRIALS:-10}
LOGS=${LOGS:-bench/out/odd}
. "$(dirname "$0")/../lib.sh"
bad=0
for D in $DTYPES; do
	for N in $SIZES; do
		L=$LOGS/odd-$D-$N
		CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((WORLD - 1))) timeout 200 "$BIN/symmtune" search --plugin-dir "$BIN" \
			--backend cuda --kernel allreduce --world "$WORLD" --shape "n=$N" --dtype "$D" --strategy random \
			--budget-trials "$TRIALS" --iters 5 --warmup 2 --log "$L.jsonl" --cache "$LOGS/configs.toml" >"$L.txt" 2>&1
		rc=$?
		st=$(grep -o '"status":"[a-z]*"' "$L.jsonl" 2>/dev/null | sort | uniq -c | awk '{printf "%s%s ", $1, substr($2, 10)}')
		echo "$D n=$N rc=$rc: $st$(grep -h winner: "$L.txt" | cut -c1-90)"
		if [ $rc -ne 0 ] || grep -q '"status":"\(wrong\|failed\|crash\|hang\)"' "$L.jsonl"; then bad=1; fi
	done
done
write_report "$LOGS/report.html"
exit $bad
