#!/bin/bash
# bench/tp-loop.sh: the user's loop on the tensor-parallel block
# (bench/tp_block.py, issue 44): the block untuned while SYMMTUNE_RECORD
# records its GEMM jobs, `symmtune search --config` of the recorded file,
# then the block on the search's cache. Carry .gpu (scripts/gpu-bundle.sh)
# and run on the GPU machine:
#
#   bash bench/tp-loop.sh W
#
# LOGS (default $OUT/torch-ops-wW, bench/torch-ops.sh's) gets recorded.toml,
# configs.toml, the search's log and tp-untuned.txt / tp-tuned.txt.
# RECORDED=FILE takes that recorded file instead of the untuned run.
# TP_BUDGET: the search's budget flags (default "--budget-trials 12
# --budget-time 20s" per job), with the pattern strategy; TP_BUDGET=default
# gives neither, the search a user runs: the default strategy and budget,
# up to 5 minutes a job.
# Six such jobs do not fit one 10-minute device call, so the loop also
# runs in PHASES (default "record search run") across calls on the same
# LOGS: IN=DIR copies an earlier call's files into LOGS first (recorded.toml,
# configs.toml, search-recorded.jsonl: carry them back with the device
# tool), and SHARD=K/N searches only shard K of N of the jobs (--shard),
# resuming from the trial log. For example, two calls:
#   PHASES="record search" SHARD=1/2 TP_BUDGET=default bash bench/tp-loop.sh 2
#   IN=... PHASES="search run" SHARD=2/2 TP_BUDGET=default bash bench/tp-loop.sh 2
# RECORD_S, SEARCH_S and RUN_S (default 130, 400, 130) bound each phase.
set -u
W=${1:?usage: bench/tp-loop.sh WORLD}
OUT=${OUT:-bench/out}
BIN=${BIN:-/tmp/bin}
LOGS=${LOGS:-$OUT/torch-ops-w$W}
here=$(dirname "$0")
[ -x "$BIN/symmtune" ] || tar xzf .gpu/bins.tgz -C "$(dirname "$BIN")"
. "$here/lib.sh"
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((W - 1)))
[ -n "${IN:-}" ] && cp "$IN"/* "$LOGS"/
PHASES=${PHASES:-record search run}
tp() { # tag, then tp_block.py's arguments
	local tag=$1
	shift
	SYMMTUNE_CACHE=$LOGS/configs.toml timeout "${RUN_S:-130}" torchrun --nproc-per-node "$W" "$here/tp_block.py" "$@" 2>&1 |
		grep -v "UserWarning\|warnings.warn\|FutureWarning\|enable_symm_mem\|_prepare(tensor\|_pipeline(gemm" |
		tee "$LOGS/tp-$tag.txt" | grep "^tp_block\|FAIL\|^#"
}
case " $PHASES " in *" record "*)
	if [ -n "${RECORDED:-}" ]; then
		cp "$RECORDED" "$LOGS/recorded.toml" # recorded by an earlier run
	else
		RUN_S=${RECORD_S:-130} SYMMTUNE_RECORD=$LOGS/recorded.toml tp untuned --modes eager,graph --compile-tokens 0
	fi
	grep -c "^\[\[job\]\]" "$LOGS/recorded.toml" | sed 's/^/recorded jobs: /'
	;;
esac
case " $PHASES " in *" search "*)
	budget="--strategy pattern ${TP_BUDGET:---budget-trials 12 --budget-time 20s}"
	[ "${TP_BUDGET:-}" = default ] && budget=
	# A log from an earlier call is resumed: its configs are not measured
	# again, and new trials are appended to it.
	log=(--log "$LOGS/search-recorded.jsonl")
	[ -s "$LOGS/search-recorded.jsonl" ] && log=(--resume "$LOGS/search-recorded.jsonl")
	start=$(date +%s)
	# shellcheck disable=SC2086
	timeout "${SEARCH_S:-400}" "$BIN/symmtune" search --plugin-dir "$BIN" --backend cuda --config "$LOGS/recorded.toml" \
		$budget ${SHARD:+--shard "$SHARD"} --cache "$LOGS/configs.toml" "${log[@]}" \
		>>"$LOGS/search-recorded.txt" 2>&1 || echo "search of the recorded file: rc $?"
	echo "search ${SHARD:-(all jobs)}: $(($(date +%s) - start)) s"
	grep "winner:\|^time:" "$LOGS/search-recorded.txt" | cut -c1-160
	;;
esac
case " $PHASES " in *" run "*) tp tuned ;; esac
