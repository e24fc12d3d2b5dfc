#!/bin/bash
# bench/serving-check.sh: bench/serving_check.py (issue 43's "Done when", run
# the way a serving program runs symmtune.torch) on W GPUs. Carry .gpu
# (scripts/gpu-bundle.sh) and run on the GPU machine:
#
#   bash bench/serving-check.sh W [--quick] [--only serving,layers,...] [--orders all] [--budget-scale F]
#
# Every check prints "CHECK name: PASS|FAIL detail" and the run ends with
# "N passed, M failed"; the log and the JSON results land under
# $OUT/serving-check-wW. SANITIZE=1 runs it under compute-sanitizer memcheck
# (pass --quick --budget-scale 10 with it). The script bounds itself (a
# watchdog per check); the outer timeout is the last resort.
set -u
W=${1:?usage: bench/serving-check.sh WORLD [serving_check.py arguments]}
shift
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=$OUT/serving-check-w$W
here=$(dirname "$0")
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
. "$here/lib.sh"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
run=(torchrun --nproc-per-node "$W")
if [ "${SANITIZE:-0}" = 1 ]; then
	run=(compute-sanitizer --tool memcheck --target-processes all --print-limit 20 "${run[@]}")
fi
timeout "${LIMIT:-540}" "${run[@]}" "$here/serving_check.py" --out "$LOGS/serving-check.json" "$@" 2>&1 |
	grep -v "UserWarning\|warnings.warn\|FutureWarning" | tee "$LOGS/serving-check.txt"
grep "^CHECK\|passed, .* failed$" "$LOGS/serving-check.txt" >"$LOGS/summary.txt"
