#!/bin/bash
# bench/experiments/tile-smoke.sh: a new kind of tile's smoke test, before a device call spends minutes
# timing it: each of TILES on each of SHAPES (default: few tiles where some CTAs get none, ragged edges,
# many waves) in each of DTYPES, checked against the float64 reference before and after 20 launches.
#   BIN=/tmp/gm/bin OUT=/tmp/x TILES=a,b DTYPES="e4m3_row bf16" bash bench/experiments/tile-smoke.sh
# FP8 runs against cuBLASLt FP8 alone (-fp8-ref-only). Writes OUT/smoke-DTYPE.csv and .err; prints a line a
# dtype and its rows. Exit 0: every row correct; 1: a run failed or a row is WRONG (its error's tail
# printed), so the caller skips the timing; 2: bad arguments.
set -u
BIN=${BIN:-bin}
OUT=${OUT:?OUT: the folder for the smoke test files}
TILES=${TILES:?TILES: the tiles to check}
DTYPES=${DTYPES:-e4m3_row bf16}
SHAPES=${SHAPES:-256x1280x1024,1000x1288x1024,8192x8192x1024}
mkdir -p "$OUT"
for dt in $DTYPES; do
	ref=
	case $dt in e4m3*) ref=-fp8-ref-only ;; esac
	timeout 90 "$BIN/gemmalone" -dtype "$dt" -shapes "$SHAPES" -tiles "$TILES" -iters 20 -warmup 2 -bt=false $ref \
		>"$OUT/smoke-$dt.csv" 2>"$OUT/smoke-$dt.err"
	rc=$?
	echo "smoke $dt rc $rc: $(grep -c ',fused,' "$OUT/smoke-$dt.csv") rows, $(grep -c WRONG "$OUT/smoke-$dt.csv") wrong"
	grep ',fused,' "$OUT/smoke-$dt.csv" | cut -d, -f1,3,5,6,8 | cut -c1-120
	if [ $rc != 0 ] || grep -q WRONG "$OUT/smoke-$dt.csv" || ! grep -q ',fused,' "$OUT/smoke-$dt.csv"; then
		tail -5 "$OUT/smoke-$dt.err"
		echo "smoke test failed ($dt): no timing"
		exit 1
	fi
done
