#!/bin/bash
# bench/ncu-gemm.sh: what limits the Hopper GEMM alone and cuBLASLt's best
# kernel (issue 56: "profile first, compare each kernel with the peak"), from
# Nsight Compute, on GPU 0, one process per shape, each under `timeout`. Run
# from the checkout on the GPU machine (no Go needed; ncu, from CUDA 13):
#
#   BIN=/tmp/bin OUT=$OUT bash bench/ncu-gemm.sh     # or: bash bench/all.sh 1 ncu
#
# For each of SHAPES (default six: 64x14336x4096 128x14336x4096 256x8192x8192
# 1024x28672x8192 8192x3584x8192 4096x14336x4096, small M first), DTYPE
# (bf16; an FP8 one against cuBLASLt's FP8 product alone, -fp8-ref-only),
# bin/gemmalone -tiles TILES (default: the shape's untuned tile,
# gpu.DefaultTileFor) checks and times cuBLASLt's first four algorithms and
# the tile as usual (-iters 5 -warmup 2, not profiled), then launches
# cuBLASLt's fastest algorithm and each tile LAUNCHES (2) more times in a
# profiled range (gemmalone -profile; cuProfilerStart/Stop): ncu runs with
# --profile-from-start off, so only those launches are profiled, each
# replayed once per metric pass (caches flushed before each pass, clocks
# left as they are: --clock-control none, as on 2026-11-23, so the SM clock
# under load shows). Sections SpeedOfLight, LaunchStats, Occupancy,
# WarpStateStats and MemoryWorkloadAnalysis, plus the tensor pipe's active
# cycles (the names this ncu knows, of METRICS_WANTED: on Hopper the hmma
# pipe's cycles count wgmma too, 93.8% for our tile on 2026-11-23), DRAM
# bytes, the SMs' active and elapsed cycles and the SM clock.
#
# About 15-30 s a shape (ncu's start, the tile's compile, some 30-40
# passes per kernel): two to three minutes for the six. DEADLINE (default
# 240 s from the start, the metric query included) bounds the whole: no
# shape starts after it, each runs under timeout min(PER_SHAPE, what is
# left) and its report's CSV export under 20 s, so the script ends by
# DEADLINE + 20 s + 60 s at worst (the archive, twice at most, and the
# table): 320 s (python/tests/test_bench_scripts.py checks the arithmetic).
#
# bench/experiments/ncu-gemm.sh is the one-off for one shape with the SASS
# source page (per-instruction stall samples, bench/experiments/ncu_sass.py).
#
# Writes $OUT/ncu-gemm/ (5 files, with all.sh's $OUT/ncu.txt 6):
#   table.md       bench/ncu_table.py: per shape each kernel's µs, TFLOP/s and
#                  share of the 989 TFLOP/s bf16 peak, SM and tensor-pipe %,
#                  DRAM GB/s and share of 4.8 TB/s, L2 hit rate, occupancy,
#                  top stalls, and a one-word limit (its rule is in the script)
#   gemmalone.csv  every shape's gemmalone output (rows timed by CUDA events
#                  outside the profiled range, '# profiled' lines, ncu's lines)
#   ncu-raw.tgz    per shape ncu-SHAPE.csv (ncu --page raw --csv), the
#                  .ncu-rep report (left out if the archive would pass 15 MiB)
#                  and gemmalone's stderr
#   machine.txt    the GPU's state (bench/lib.sh) and ncu's version
set -u
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
SHAPES=${SHAPES:-64x14336x4096 128x14336x4096 256x8192x8192 1024x28672x8192 8192x3584x8192 4096x14336x4096}
DTYPE=${DTYPE:-bf16}
TILES=${TILES:-default}
LAUNCHES=${LAUNCHES:-2}
PER_SHAPE=${PER_SHAPE:-75}
DEADLINE=${DEADLINE:-240}
here=$(dirname "$0")
LOGS=$OUT/ncu-gemm
WORK=${WORK:-/tmp/ncu-gemm-work}
[ -x "$BIN/gemmalone" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
. "$here/lib.sh"
export CUDA_VISIBLE_DEVICES=0
rm -rf "$WORK" && mkdir -p "$WORK"
if ! "$BIN/gemmalone" -h 2>&1 | grep -q -- '-profile'; then
	echo "$BIN/gemmalone has no -profile flag: rebuild the bundle (sh scripts/gpu-bundle.sh) from a checkout with it" >&2
	exit 1
fi

# ncu: on PATH, else the newest of CUDA's and Nsight Compute's own installs.
NCU=${NCU:-$(command -v ncu || ls -d /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort -V | tail -1)}
if [ -z "$NCU" ] || [ ! -x "$NCU" ]; then
	echo "ncu not found (PATH, /usr/local/cuda*/bin, /opt/nvidia/nsight-compute/*): nothing profiled" >&2
	exit 1
fi
{
	echo "ncu: $NCU"
	timeout 20 "$NCU" --version
} >>"$LOGS/machine.txt" 2>&1

# The metrics beyond the sections, those this ncu knows: a name it does not
# know would stop every profile. The query lists base names (no suffix).
METRICS_WANTED="sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active
dram__bytes_read.sum
dram__bytes_write.sum
lts__t_sector_hit_rate.pct
sm__cycles_active.avg
sm__cycles_elapsed.avg
sm__cycles_elapsed.avg.per_second"
known=$(timeout 60 "$NCU" --query-metrics 2>/dev/null | awk '{print $1}')
# A list without sm__cycles_active (every chip's) is not one this reads.
grep -qx sm__cycles_active <<<"$known" || known=
metrics=
for m in $METRICS_WANTED; do
	if [ -z "$known" ] || grep -qx "${m%%.*}" <<<"$known"; then
		metrics=${metrics:+$metrics,}$m
	fi
done
# Without a list (the query failed) only the names profiled on an H200 before.
[ -n "$known" ] || metrics=sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second
echo "metrics beside the sections: ${metrics:-none}"
extra=()
[ -z "$metrics" ] || extra=(--metrics "$metrics")

# FP8: cuBLASLt's FP8 product (fast accumulation) is the one reference, the
# kernel profiled beside ours (gemmalone -fp8-ref-only); its bf16 product
# would be profiled otherwise.
fp8ref=()
case $DTYPE in e4m3*) fp8ref=(-fp8-ref-only) ;; esac
echo "$(echo "$SHAPES" | wc -w) shapes, $DTYPE, tiles $TILES, $LAUNCHES profiled launches each, deadline ${DEADLINE}s"
for s in $SHAPES; do
	left=$((DEADLINE - SECONDS))
	if [ "$left" -le 0 ]; then
		echo "deadline: $s and later not run"
		break
	fi
	# The launch count only caps the profiles: the ranges hold cuBLASLt's
	# call (one kernel, or two with a split-K reduction) and each tile's.
	timeout $((left < PER_SHAPE ? left : PER_SHAPE)) "$NCU" --profile-from-start off --clock-control none \
		--launch-count $((20 * LAUNCHES)) --section SpeedOfLight --section LaunchStats --section Occupancy \
		--section WarpStateStats --section MemoryWorkloadAnalysis "${extra[@]}" -f -o "$WORK/ncu-$s" \
		"$BIN/gemmalone" -dtype "$DTYPE" -shapes "$s" -tiles "$TILES" -iters 5 -warmup 2 -bt=false -profile "$LAUNCHES" "${fp8ref[@]}" \
		>"$WORK/gemmalone-$s.log" 2>"$WORK/gemmalone-$s.err" || echo "$s: rc $? at ${SECONDS}s"
	cat "$WORK/gemmalone-$s.log" >>"$LOGS/gemmalone.csv"
	if [ -f "$WORK/ncu-$s.ncu-rep" ]; then
		timeout 20 "$NCU" --import "$WORK/ncu-$s.ncu-rep" --page raw --csv >"$WORK/ncu-$s.csv" 2>>"$WORK/gemmalone-$s.err" ||
			echo "$s: export rc $?"
	fi
	echo "$s done at ${SECONDS}s"
done
timeout 20 tar czf "$LOGS/ncu-raw.tgz" -C "$WORK" . || echo "archive: rc $?"
if [ "$(stat -c %s "$LOGS/ncu-raw.tgz" 2>/dev/null || echo 0)" -gt $((15 << 20)) ]; then
	echo "ncu-raw.tgz over 15 MiB: without the .ncu-rep reports"
	timeout 20 tar czf "$LOGS/ncu-raw.tgz" -C "$WORK" --exclude='*.ncu-rep' . || echo "archive: rc $?"
fi
# The table, where the machine has a Python (standard library only).
if command -v python3 >/dev/null; then
	timeout 20 python3 "$here/ncu_table.py" --gemmalone "$LOGS/gemmalone.csv" "$WORK"/ncu-*.csv >"$LOGS/table.md" 2>&1 ||
		echo "table: rc $?"
	cat "$LOGS/table.md"
fi
