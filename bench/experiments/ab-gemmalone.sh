#!/bin/bash
# bench/experiments/ab-gemmalone.sh: two builds of bin/gemmalone (a branch's
# kernel against main's) on the same shapes and tiles, in one device call:
# each shape ROUNDS times by each build, alternating A B, B A, ... (one
# process each, as bench/gemmalone-56.sh runs them), every tile between
# cuBLASLt's best as there, so a build's ratio is judged against the same
# clocks as the other's. Checked against float64 by gemmalone itself
# before each timing.
#   BIN_A=/tmp/a/bin BIN_B=/tmp/b/bin SHAPES="16384x8192x1024 ..." DTYPE=e4m3_row \
#     TILES=default,128x128:s6:c2:g4:pp OUT=$OUT bash bench/experiments/ab-gemmalone.sh
# Writes $OUT/ab/A.csv and B.csv (gemmalone's CSV, readable by
# bench/gemmalone_table.py) and err.txt; prints both tables and
# ab_table.py's comparison (each round, B's time over A's). DEADLINE
# (default 480 s) bounds it: nothing starts after it.
set -u
OUT=${OUT:-bench/out}
ROUNDS=${ROUNDS:-2} SUSTAIN=${SUSTAIN:-0.2s} DTYPE=${DTYPE:-bf16} TILES=${TILES:-default} DEADLINE=${DEADLINE:-480}
here=$(dirname "$0")
mkdir -p "$OUT/ab"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
for s in $SHAPES; do
	for r in $(seq 1 "$ROUNDS"); do
		order="A B"
		[ $((r % 2)) = 0 ] && order="B A"
		for build in $order; do
			if [ "$SECONDS" -ge "$DEADLINE" ]; then
				echo "deadline: $s round $r build $build and later not run"
				break 3
			fi
			bin=$BIN_A
			[ "$build" = B ] && bin=$BIN_B
			timeout 60 "$bin/gemmalone" -dtype "$DTYPE" -shapes "$s" -tiles "$TILES" -sustain "$SUSTAIN" -bt=false \
				>>"$OUT/ab/$build.csv" 2>>"$OUT/ab/err.txt" || echo "$s round $r build $build: rc $?"
		done
	done
done
for build in A B; do
	echo "## build $build"
	python3 "$here/../gemmalone_table.py" "$OUT/ab/$build.csv" || echo "table $build: rc $?"
done
echo "## B against A"
python3 "$here/ab_table.py" "$OUT/ab/A.csv" "$OUT/ab/B.csv" || echo "ab table: rc $?"
