#!/bin/bash
# bench/all.sh: the maintained GPU benchmarks, the ones docs/results.md and
# README.md cite, in one command (`make bench-gpu`). Build the bundle here
# (sh scripts/gpu-bundle.sh), carry .gpu to the GPU machine and run there,
# from the checkout:
#
#   bash bench/all.sh W [PART ...]      # or: make bench-gpu W=2 [PARTS="..."]
#
# PARTs, in this order when none is given (each command is in bench/README.md).
# A device call allows 10 minutes: allreduce's and gemm's timeouts add up to
# less (a test sums them); run one part per call.
#   allreduce   bench/allreduce.sh: all-reduce, queued, peer and graph methods, beside NCCL and symm_mem
#   gemm        bench/gemm-paired.sh: bf16 fused GEMMs paired with cuBLAS and torch's fused ops
#   fp8-search  bench/torch-fp8.sh with BENCH=0: the FP8 searches, into /tmp/torch-fp8-wW.toml
#   fp8         bench/torch-fp8.sh with NO_SEARCH=1: FP8 checks, graphs, the table beside _scaled_mm
#   ops         bench/torch-ops.sh: the torch ops checks, host time, decode step, a late rank and bad
#               input, the TP block on the six recorded shapes
#   decode      bench/torch-ops.sh with NO_SEARCH=1: the graphed decode step untuned (no cache), as
#               README's decode table; under $OUT/untuned, apart from ops' tuned cache
#   serving     bench/serving-check.sh: the serving-program checks
#   search      bench/transfer.sh, COMPARE="transfer exhaustive": a default search's winner against
#               the exhaustive optimum (world 2)
#   transfer    bench/transfer.sh on configs/transfer-cuda.toml: seeded against cold searches (world 2)
#   search-check bench/search-check.sh, issue 44's table: for agmm and matmulrs at 8192 and
#               16384 x 3584 x 8192, bf16, a 60 s search's winner, its best configs, its families,
#               an exhaustive landscape's top 5 and the untuned config in the same torch rounds
#               (about 90 s a cell at W=2: one call)
#   search-check-fp8 the same for e4m3 (no exhaustive landscape: one call)
#   gemmalone   bin/gemmalone on GPU 0: the Hopper GEMM alone against cuBLASLt, bf16 and FP8
#               (short bursts), and bf16 sustained (-sustain 3s: README's 1 x H100 table)
#   gemmalone-small bench/gemmalone-56.sh: issue 56's small-M subset (25 shapes, M 64-1024, bf16),
#               the default tile against six candidates, sustained 0.5 s, and its table (one call)
#   gemmalone-56 the same on issue 56's whole set (129 shapes, bf16 and FP8; SHARD=i/n, one call a
#               shard; not among the default parts: about an hour a dtype)
#   gemmalone-bar bench/gemmalone-56.sh SET=bar: issue 56's bars counted as they are judged (the
#               untuned tile on the whole set, 2 s windows, two rounds, the second balanced, FP8
#               lean; DTYPES, default e4m3_row; SHARD=i/5 row scales, i/6 bf16 and e4m3, one call
#               a shard; not among the default parts)
#   ncu         bench/ncu-gemm.sh: Nsight Compute on the Hopper GEMM's untuned tile and cuBLASLt's
#               best algorithm at six shapes (M 64-8192, bf16), two launches each, and what limits
#               each kernel (bench/ncu_table.py; issue 56; a 240 s deadline: one call)
# Each part writes under $OUT (default bench/out) and its output to
# $OUT/PART.txt; a part that fails is named at the end, and the others still run.
set -u
W=${1:?usage: bench/all.sh WORLD [allreduce gemm fp8-search fp8 ops decode serving search transfer search-check search-check-fp8 gemmalone gemmalone-small gemmalone-56 gemmalone-bar ncu]}
shift
export OUT=${OUT:-bench/out} BIN=${BIN:-/tmp/bin}
here=$(dirname "$0")
mkdir -p "$OUT"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(allreduce gemm fp8-search fp8 ops decode serving search transfer search-check search-check-fp8 gemmalone gemmalone-small ncu)
failed=()
run_part() { # part
	case $1 in
	allreduce) bash "$here/allreduce.sh" "$W" ;;
	gemm) bash "$here/gemm-paired.sh" "$W" ;;
	fp8-search) BENCH=0 bash "$here/torch-fp8.sh" "$W" ;;
	fp8) NO_SEARCH=1 bash "$here/torch-fp8.sh" "$W" ;;
	ops)
		RECORDED=${RECORDED:-$here/results/2026-11-25-h100x2-tp-block-recorded.toml} \
			TP_BUDGET=${TP_BUDGET:---budget-trials 30 --budget-time 15s} bash "$here/torch-ops.sh" "$W" check compile host decode
		;;
	decode) OUT=$OUT/untuned NO_SEARCH=1 TP=0 EDGE=0 bash "$here/torch-ops.sh" "$W" check decode ;;
	serving) bash "$here/serving-check.sh" "$W" ;;
	search)
		COMPARE="transfer exhaustive" BACKEND=cuda DTYPE=bf16 JOBS_FILE=configs/exhaustive-cuda.toml \
			OUT=$OUT/search-quality sh "$here/transfer.sh"
		;;
	transfer) BACKEND=cuda DTYPE=bf16 JOBS_FILE=configs/transfer-cuda.toml OUT=$OUT/transfer sh "$here/transfer.sh" ;;
	search-check | search-check-fp8)
		dtype=bf16 best=4
		[ "$1" = search-check-fp8 ] && dtype=e4m3 best=6
		DTYPE=$dtype BEST=$best TOGETHER=1 MODES= CHOICE=0 SHAPES="8192x3584x8192 16384x3584x8192" \
			OUT=$OUT/$1 bash "$here/search-check.sh" "$W"
		;;
	gemmalone)
		mkdir -p "$OUT/gemmalone"
		for dt in bf16 e4m3 e4m3_row; do
			CUDA_VISIBLE_DEVICES=0 timeout 150 "$BIN/gemmalone" -dtype "$dt" \
				-tiles "${TILES:-128x256:s4:c2:g8:cl2,128x224:s5:c2:g4,128x256:s4:c2:g8,128x128:s6:c2:g4:pp}" \
				>"$OUT/gemmalone/gemmalone-$dt.csv" 2>"$OUT/gemmalone/gemmalone-$dt.err" || return 1
			cat "$OUT/gemmalone/gemmalone-$dt.csv"
		done
		# README's 1 x H100 table: 3 s back to back per kernel.
		CUDA_VISIBLE_DEVICES=0 timeout 300 "$BIN/gemmalone" -dtype bf16 -sustain 3s -tiles "${SUSTAINED_TILES:-128x224:s5:c2:g4,128x256:s4:c2:g8:cl2}" \
			>"$OUT/gemmalone/gemmalone-sustained.csv" 2>"$OUT/gemmalone/gemmalone-sustained.err" || return 1
		cat "$OUT/gemmalone/gemmalone-sustained.csv"
		;;
	gemmalone-small) SET=small bash "$here/gemmalone-56.sh" ;;
	gemmalone-56) SET=full bash "$here/gemmalone-56.sh" ;;
	gemmalone-bar) SET=bar bash "$here/gemmalone-56.sh" ;;
	ncu) bash "$here/ncu-gemm.sh" ;;
	*)
		echo "unknown part $1" >&2
		return 2
		;;
	esac
}
for p in "${parts[@]}"; do
	echo "== $p ($(date -u +%H:%M:%S))"
	run_part "$p" 2>&1 | tee "$OUT/$p.txt"
	[ "${PIPESTATUS[0]}" = 0 ] || failed+=("$p")
done
[ ${#failed[@]} = 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
