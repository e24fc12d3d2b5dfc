#!/bin/bash
# bench/gemmalone-56.sh: issue 56's table, the Hopper GEMM alone against
# cuBLASLt's best algorithm (bin/gemmalone), on GPU 0, one process per
# shape, each under `timeout` and appended to one CSV: a shape that hangs or
# crashes loses its own rows only, and a run cut short keeps every shape
# done. Run from the checkout on the GPU machine (no Go needed):
#
#   BIN=bin bash bench/gemmalone-56.sh              # SET=small: one device call
#   SET=full SHARD=1/8 BIN=bin bash bench/gemmalone-56.sh
#
# SET=small (default; `make bench-gpu PARTS=gemmalone-small`): the small-M
# default rule. gemmalone -set issue56-small (25 shapes: M 64, 128, 256,
# 512, 1024 by N x K 1280x8192, 8192x3584, 14336x4096, 8192x8192,
# 28672x8192, smallest M first), bf16, tiles "default,smallm,splitk" (the
# untuned tile, gpu.DefaultTileFor, six 64-row, ping-pong and 128-row
# candidates, and five split-K tiles, each timed only where it could fill
# SMs its tiles leave idle: 34 times over the 15 shapes of M <= 256), each
# kernel SUSTAIN (0.5s) back to back, cuBLASLt's first four algorithms,
# each tile between cuBLASLt's best right before and after it (the ratio
# column), no cublaslt-bt rows. A shape costs about 1.5 s to start + 4 S
# (cuBLASLt) + 7 tiles x 3 S = 14 s at S = 0.5 s (2026-12-02: 335 s for
# the 25 shapes), the split-K tiles 34 x 3 S = 51 s more: about 400 s,
# after one pass that compiles the tiles into the cubin cache (12 NVRTC
# compiles, about 15 s). DEADLINE (default 460 s from the start)
# bounds the whole: nothing starts after it, and every process runs under
# timeout min(PER_SHAPE, what is left), its rows so far kept where it is
# cut, so the script ends by DEADLINE plus the table's 20 s, inside one
# 600 s device call
# (python/tests/test_bench_scripts.py checks the arithmetic).
#
# RS=1 adds gemmalone -rs: each tile timed again as a one-rank matmul +
# reduce-scatter (rows by TMA stores, then by each warp's stores), costed
# over the plain tile in table.md's last section (issue 56: at most 2%);
# two more timings a tile, 2 S more (PER_SHAPE and DEADLINE unchanged:
# fewer shapes fit).
#
# LONG_SUSTAIN (default 2s) is the window of products of LONG_GFLOP
# (default 2500) GFLOP or more, instead of SUSTAIN: at a few calls a
# window the ratio of such a product moves with the window, not only with
# the kernels. On 1 x H200 (2026-12-04, call G of
# bench/results/2026-12-04-h200-streamk-clusters.md) 4096x57344x8192 (5.5
# ms a call) ran 0.895-0.906x cuBLASLt in 0.2 s windows and 0.985-0.993x
# in 2 s ones, the same kernels in one process each, in turn; ncu counted
# 1.2% more cycles than cuBLASLt's kernel. Below about 2 ms a call (8192^3,
# 1024x28672x8192, 4096x14336x4096) the two windows agreed within the
# rounds' spread. A long product then costs about 10 times a short one's
# time (a 2 s window for each of cuBLASLt's four algorithms and each
# tile's three).
#
# FP8_REF_ONLY=1 passes -fp8-ref-only in FP8 runs: cuBLASLt's FP8 product
# (fast accumulation) is the one reference, without the bf16 product and the
# FP8 product without fast accumulation; the ratio the tables use for FP8
# (to cuBLASLt FP8) is the same, a shape takes about half the time. Without
# it the FP8 reference timed right after a bf16 window ran 3-8% slower than
# alone at some shapes on 1 x H100 (256 and 1,024 rows, 8192^3), lifting
# our ratios there (bench/results/2026-12-06-h100-fp8-lean.md).
#
# SURVEY=D passes -survey-sustain D: cuBLASLt's algorithms are surveyed
# for the reference in D windows, and only the pick is timed in the shape's
# window around each tile (the ratio's). A bf16 shape in 2 s windows spent
# 8 of its 14 s a round on the four algorithms; FP8 lean has one.
#
# SHAPES="MxNxK ..." takes those shapes instead of the set's (SHARD then
# does nothing). ROUNDS=N (default 1) times each shape N times in a row, the
# tiles' order reversed in every even round; the table averages them.
# BALANCED=1 with ROUNDS=2 (or any even N): every even round also times each
# tile before and after the references (gemmalone -kernel-outside) instead
# of the references before and after it, so each kernel follows the other
# as often (the reference after our row-scale kernel ran 2.7% slow:
# bench/results/2026-12-06-h100-fp8-method.md).
#
# SET=full (`PARTS=gemmalone-56`): -set issue56, issue 56's whole set (129
# shapes: its table, then Llama-3-70B's and Qwen2.5-72B's projections at
# TP 1, 2, 4, 8 and M 64-16384), for each of DTYPES (bf16 e4m3 e4m3_row),
# SUSTAIN 1s, tiles "default,smallm" unless TILES says otherwise (the
# split-K tiles' time is not budgeted there: TILES=default,smallm,splitk
# adds them); SHARD=i/n runs every n-th shape from the i-th (the whole set,
# one dtype, is about an hour: n = 8 fits one call a shard for bf16; FP8
# times two cuBLASLt products around each tile, n = 12).
#
# SET=bar (`PARTS=gemmalone-bar`): issue 56's bars counted the way they
# are judged (bench/results/2026-12-06-h100-sustained-row.md): -set issue56,
# the untuned tile only, every product in 2 s windows, two rounds a shape
# (the second balanced: BALANCED=1), FP8 against cuBLASLt FP8 alone
# (FP8_REF_ONLY=1), and cuBLASLt's algorithms surveyed in 0.5 s windows
# (SURVEY). DTYPES defaults to e4m3_row. About 18 s a shape for two rounds:
# a dtype is SHARD=1/5 .. 5/5 for row scales, 1/6 .. 6/6 for bf16 and e4m3
# (their survey times four algorithms), one device call a shard, within a
# 520 s deadline. Shards of one card add up: gemmalone_table.py reads them
# together and refuses rows of two cards. SUSTAIN does not change the
# windows; BAR_WINDOW (default 2s) does, for a planned check of another
# window against the counts' (bench/results/PLANNED-window-1s).
#
# Writes $OUT/gemmalone-56/ (SET=full: gemmalone-56-IofN/; SET=bar:
# gemmalone-56-bar-IofN/):
# gemmalone-DTYPE.csv (every shape's rows), gemmalone-DTYPE.err,
# compile-DTYPE.csv (the compile pass, a 64x1280x8192 check of every tile:
# a shape every split-K tile runs on),
# machine.txt, and table.md: bench/gemmalone_table.py's table (per shape
# cuBLASLt's best, the best tile, the default tile and whether it is
# within 3% of the best; a proposed rule by rows).
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
SET=${SET:-small}
here=$(dirname "$0")
case $SET in
small)
	set_name=issue56-small DTYPES=${DTYPES:-bf16} SUSTAIN=${SUSTAIN:-0.5s} PER_SHAPE=${PER_SHAPE:-30}
	DEADLINE=${DEADLINE:-460} tag= TILES=${TILES:-default,smallm,splitk}
	;;
full)
	set_name=issue56 DTYPES=${DTYPES:-bf16 e4m3 e4m3_row} SUSTAIN=${SUSTAIN:-1s} PER_SHAPE=${PER_SHAPE:-120}
	DEADLINE=${DEADLINE:-540} tag=-$(echo "${SHARD:-1/1}" | sed s,/,of,)
	;;
bar)
	set_name=issue56 DTYPES=${DTYPES:-e4m3_row} TILES=default SUSTAIN=${BAR_WINDOW:-2s} LONG_SUSTAIN=${BAR_WINDOW:-2s}
	ROUNDS=2 BALANCED=1
	FP8_REF_ONLY=1 SURVEY=0.5s PER_SHAPE=${PER_SHAPE:-60}
	DEADLINE=${DEADLINE:-520} tag=-bar-$(echo "${SHARD:-1/1}" | sed s,/,of,)
	;;
*)
	echo "SET=$SET: want small, full or bar" >&2
	exit 2
	;;
esac
LOGS=$OUT/gemmalone-56$tag
TILES=${TILES:-default,smallm}
rs_flag=
[ "${RS:-0}" = 1 ] && rs_flag=-rs
survey_flag=
[ -n "${SURVEY:-}" ] && survey_flag="-survey-sustain=$SURVEY"
# ROUNDS=N times each shape N times in a row, the tiles' order reversed in
# every even round (TILES's list; a group such as "smallm" keeps its own
# order): paired rounds, which the table averages (geometric mean).
ROUNDS=${ROUNDS:-1}
LONG_SUSTAIN=${LONG_SUSTAIN:-2s} LONG_GFLOP=${LONG_GFLOP:-2500}
reversed=$(echo "$TILES" | tr ',' '\n' | tac | paste -sd, -)
[ -x "$BIN/gemmalone" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
. "$here/lib.sh"
export CUDA_VISIBLE_DEVICES=0
shard=${SHARD:-1/1}
si=${shard%/*} sn=${shard#*/}
shapes=${SHAPES:-$("$BIN/gemmalone" -set "$set_name" -list | awk -v i="$si" -v n="$sn" 'NR % n == i % n')}
echo "$(echo "$shapes" | wc -w) shapes of $set_name (shard $shard), $DTYPES, tiles $TILES, $SUSTAIN a kernel ($LONG_SUSTAIN from $LONG_GFLOP GFLOP), $ROUNDS round(s), deadline ${DEADLINE}s"
for dt in $DTYPES; do
	ref_flag=
	case "${FP8_REF_ONLY:-0}:$dt" in 1:e4m3*) ref_flag=-fp8-ref-only ;; esac
	# SET=bar surveys where cuBLASLt has several algorithms: row-scale FP8
	# has one, and its counts (2026-12-06-h100-sustained-row) ran without.
	dt_survey=$survey_flag
	[ "$SET:$dt" = bar:e4m3_row ] && dt_survey=
	# The tiles compiled once into the cubin cache (and checked), not in a
	# shape's time.
	left=$((DEADLINE - SECONDS))
	[ "$left" -gt 0 ] || break
	timeout $((left < 90 ? left : 90)) "$BIN/gemmalone" -dtype "$dt" -shapes 64x1280x8192 -tiles "$TILES" -iters 1 -warmup 1 \
		-bt=false $ref_flag >"$LOGS/compile-$dt.csv" 2>"$LOGS/compile-$dt.err" || echo "compile pass $dt: rc $?"
	grep -c ",fused," "$LOGS/compile-$dt.csv" | sed "s/^/compile pass $dt: tiles checked: /"
	for s in $shapes; do
		for r in $(seq 1 "$ROUNDS"); do
			left=$((DEADLINE - SECONDS))
			if [ "$left" -le 0 ]; then
				echo "deadline: $dt $s round $r and later not run"
				break 2
			fi
			tiles=$TILES order_flag=
			[ $((r % 2)) = 0 ] && tiles=$reversed
			[ $((r % 2)) = 0 ] && [ "${BALANCED:-0}" = 1 ] && order_flag=-kernel-outside
			window=$SUSTAIN
			echo "$s" | awk -Fx -v g="$LONG_GFLOP" '{ exit !(2 * $1 * $2 * $3 >= g * 1e9) }' && window=$LONG_SUSTAIN
			timeout $((left < PER_SHAPE ? left : PER_SHAPE)) "$BIN/gemmalone" -dtype "$dt" -shapes "$s" -tiles "$tiles" \
				-sustain "$window" $dt_survey -bt=false $rs_flag $ref_flag $order_flag >>"$LOGS/gemmalone-$dt.csv" 2>>"$LOGS/gemmalone-$dt.err" ||
				echo "$dt $s round $r: rc $? at ${SECONDS}s"
		done
	done
	echo "$dt done at ${SECONDS}s"
done
# The table, where the machine has a Python (standard library only).
if command -v python3 >/dev/null; then
	timeout 20 python3 "$here/gemmalone_table.py" "$LOGS"/gemmalone-*.csv >"$LOGS/table.md" 2>&1 || echo "table: rc $?"
	cat "$LOGS/table.md"
fi
