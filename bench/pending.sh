#!/bin/bash
# bench/pending.sh: the multi-GPU measurements the open issues still need,
# one part per device call (each fits in its 10 minutes), so a session that
# gets a 2- or 4-GPU machine spends its time measuring, not assembling
# commands. Carry .gpu (scripts/gpu-bundle.sh) and run, on the GPU machine:
#
#   bash bench/pending.sh allreduce 4   # issues 11 and 12: 4 x H200 all-reduce
#   bash bench/pending.sh gemm W        # issue 13: bench/gemm-fused.sh on W GPUs
#   bash bench/pending.sh torch W       # issue 12: symmtune.torch GEMMs (fused and pipeline) on W GPUs
#
# allreduce: `symmtune search` at 4 KiB, 1 MiB, 16 MiB and 128 MiB of bf16
#   (pattern, 30 trials each) into one cache, then bench/torch_allreduce.py
#   on that cache (symmtune.torch against the tuned figure, NCCL and torch
#   symm_mem), then bench/allreduce-speed.sh (the 16 and 128 MiB options).
# gemm: bench/gemm-fused.sh with WORLDS=W (GEMM alone, then both impls'
#   searches beside the peers), then the winners timed paired with cuBLAS
#   (bench/torch_paired.py --tuned).
# torch: bench/torch_gemm.py (every branch of both pipelines checked, then
#   timed beside torch's ops) and bench/torch_ops.py's check (eager, in a
#   user's graph, fused configs forced). (The diag part and its scripts,
#   torch_stress.py and torch_fused.py, went with symmtune.torch's Python
#   launch sequence: it is the plugins' Go one now.)
# Everything lands under $OUT/pending-PART-wW (logs tarred as
# pending-PART-wW.tgz; the summary on stdout).
set -u
PART=${1:?usage: bench/pending.sh allreduce|gemm|torch|diag WORLD}
W=${2:?usage: bench/pending.sh allreduce|gemm|torch|diag WORLD}
case $PART in allreduce | gemm | torch | diag) ;; *)
	echo "unknown part $PART: want allreduce, gemm, torch or diag" >&2
	exit 2
	;;
esac
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/pending-$PART-w$W
here=$(dirname "$0")
. "$here/lib.sh"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
export PYTHONPATH=$here/../python:$here
# libsymmtune (symmtune's bindings load it): from bins.tgz, unpacked beside $BIN.
export SYMMTUNE_LIB=${SYMMTUNE_LIB:-$(dirname "$BIN")/python/symmtune/libsymmtune.so}

case $PART in
allreduce)
	for n in 2048 524288 8388608 67108864; do
		timeout 45 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel allreduce --world "$W" \
			--shape "n=$n" --dtype bf16 --strategy pattern --budget-trials 30 --cache "$LOGS/configs.toml" \
			--log "$LOGS/search-n$n.jsonl" >"$LOGS/search-n$n.txt" 2>&1 || echo "search n=$n: rc $?"
		grep -h "winner:" "$LOGS/search-n$n.txt" | cut -c1-160 | sed "s/^/n=$n /"
	done
	SYMMTUNE_CACHE=$LOGS/configs.toml timeout 120 torchrun --nproc-per-node "$W" "$here/torch_allreduce.py" \
		2048 524288 8388608 67108864 999999 >"$LOGS/torch-allreduce.txt" 2>&1 || echo "torch_allreduce: rc $?"
	tail -9 "$LOGS/torch-allreduce.txt"
	BIN=$BIN LOGS=$LOGS/speed WORLD=$W DEADLINE=150 timeout 200 bash "$here/allreduce-speed.sh" >"$LOGS/speed.txt" 2>&1 ||
		echo "allreduce-speed: rc $?"
	tail -15 "$LOGS/speed.txt"
	;;
gemm)
	BIN=$BIN OUT=$LOGS LOGS=$LOGS/logs WORLDS=$W timeout 440 bash "$here/gemm-fused.sh" >"$LOGS/gemm-fused.txt" 2>&1 ||
		echo "gemm-fused: rc $?"
	tail -40 "$LOGS/gemm-fused.txt"
	# The same searches' winners as symmtune.torch picks them from the cache,
	# timed paired with cuBLAS and torch's fused ops (bench/torch_paired.py).
	SYMMTUNE_CACHE=$LOGS/logs/configs.toml timeout 120 torchrun --nproc-per-node "$W" "$here/torch_paired.py" \
		--tuned 4096x1792x4096,8192x3584x8192,16384x3584x8192 >"$LOGS/paired.txt" 2>&1 || echo "torch_paired: rc $?"
	grep "^|" "$LOGS/paired.txt"
	;;
torch)
	timeout 300 torchrun --nproc-per-node "$W" "$here/torch_gemm.py" >"$LOGS/torch-gemm.txt" 2>&1 || echo "torch_gemm: rc $?"
	grep -v "Warning\|enable_symm" "$LOGS/torch-gemm.txt" | tail -30
	timeout 240 torchrun --nproc-per-node "$W" "$here/torch_ops.py" check >"$LOGS/torch-ops.txt" 2>&1 || echo "torch_ops: rc $?"
	grep "^check\|FAIL" "$LOGS/torch-ops.txt" | tail -40
	;;
esac
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/pending-$PART-w$W
here=$(dirname "$0")
. "$here/lib.sh"
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
export PYTHONPATH=$here/../python:$here
# libsymmtune (symmtune's bindings load it): from bins.tgz, unpacked beside $BIN.
export SYMMTUNE_LIB=${SYMMTUNE_LIB:-$(dirname "$BIN")/python/symmtune/libsymmtune.so}

case $PART in
allreduce)
	for n in 2048 524288 8388608 67108864; do
		timeout 45 "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --kernel allreduce --world "$W" \
			--shape "n=$n" --dtype bf16 --strategy pattern --budget-trials 30 --cache "$LOGS/configs.toml" \
			--log "$LOGS/search-n$n.jsonl" >"$LOGS/search-n$n.txt" 2>&1 || echo "search n=$n: rc $?"
		grep -h "winner:" "$LOGS/search-n$n.txt" | cut -c1-160 | sed "s/^/n=$n /"
	done
	SYMMTUNE_CACHE=$LOGS/configs.toml timeout 120 torchrun --nproc-per-node "$W" "$here/torch_allreduce.py" \
		2048 524288 8388608 67108864 999999 >"$LOGS/torch-allreduce.txt" 2>&1 || echo "torch_allreduce: rc $?"
	tail -9 "$LOGS/torch-allreduce.txt"
	BIN=$BIN LOGS=$LOGS/speed WORLD=$W DEADLINE=150 timeout 200 bash "$here/allreduce-speed.sh" >"$LOGS/speed.txt" 2>&1 ||
		echo "allreduce-speed: rc $?"
	tail -15 "$LOGS/speed.txt"
	;;
gemm)
	BIN=$BIN OUT=$LOGS LOGS=$LOGS/logs WORLDS=$W timeout 440 bash "$here/gemm-fused.sh" >"$LOGS/gemm-fused.txt" 2>&1 ||
		echo "gemm-fused: rc $?"
	tail -40 "$LOGS/gemm-fused.txt"
	# The same searches' winners as symmtune.torch picks them from the cache,
	# timed paired with cuBLAS and torch's fused ops (bench/torch_paired.py).
	SYMMTUNE_CACHE=$LOGS/logs/configs.toml timeout 120 torchrun --nproc-per-node "$W" "$here/torch_paired.py" \
		--tuned 4096x1792x4096,8192x3584x8192,16384x3584x8192 >"$LOGS/paired.txt" 2>&1 || echo "torch_paired: rc $?"
	grep "^|" "$LOGS/paired.txt"
	;;
torch)
	timeout 400 torchrun --nproc-per-node "$W" "$here/torch_fused.py" >"$LOGS/torch-fused.txt" 2>&1 || echo "torch_fused: rc $?"
	grep -v ",ok," "$LOGS/torch-fused.txt" | grep -v "Warning\|enable_symm" | tail -30
	;;
diag)
	for v in matmulrs/64x224:s6:c2:g8:pp/kernel/0 matmulrs/64x224:s6:c2:g8:pp/epilogue/0 matmulrs/64x224:s6:c2:g8:pp/epilogue/1; do
		f=$LOGS/stress-$(echo "$v" | tr '/:' '__').txt
		timeout 90 torchrun --nproc-per-node "$W" "$here/torch_stress.py" --rounds 4 --calls 300 --watchdog 20 \
			--variants "$v" >"$f" 2>&1 || echo "stress $v: rc $?"
		grep "^stress" "$f" | cut -c1-300
	done
	# Nsight Systems makes no report there (the device library's KINDS.md):
	# torch.profiler's trace of 20 calls, graphed and not, per rank.
	timeout 150 torchrun --nproc-per-node "$W" "$here/torch_stress.py" --rounds 1 --calls 50 --profile "$LOGS/trace" \
		--variants agmm/64x256:s5:c2:g8:pp/push/1,agmm/64x256:s5:c2:g8:pp/push/0 >"$LOGS/trace.txt" 2>&1 ||
		echo "trace: rc $?"
	grep "^stress" "$LOGS/trace.txt" | cut -c1-300
	# The last call per rank, step by step.
	for f in "$LOGS"/trace/*.json; do python3 "$here/trace_timeline.py" "$f" >"${f%.json}.txt" && tail -12 "${f%.json}.txt"; done
	rm -f "$LOGS"/trace/*.json
	;;
esac
tar czf "$OUT/pending-$PART-w$W.tgz" -C "$OUT" "pending-$PART-w$W"
