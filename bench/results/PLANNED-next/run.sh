#!/bin/bash
# PLANNED (written 2026-12-06 08:40 UTC): the next session's first GEMM call, whichever card comes, so that
# no start is spent on the wrong script (a call naming nvidia-h200 often gets an H100).
#   On an H200: ../2026-12-06-h100-wide-pick/with-others.sh (about 530 s): the wide pick and evict-first's
#     40 MiB bound held out there, then the whole bf16 set, the issue's own count (docs/results-gemm.md,
#     "Next, for a GPU", items 1-3).
#   On an H100: ../PLANNED-fp8-method/check.sh (about 180 s): which reference mode counts the FP8 sets;
#     then, in the same call, the row-scale set lean in two rounds if time is left (DEADLINE from what is
#     left), else that is the second call (../PLANNED-fp8-method/sets.sh).
# Bundles: bash bench/results/2026-12-06-h100-wide-pick/build.sh; bash bench/results/2026-12-06-h100-ef-l2-lower/build.sh;
# bash bench/results/2026-12-06-h100-fp8-set-retime/build.sh (gemmalone unchanged since cd5e9de: the .gpu/ ones
# built that day serve). Carry [".gpu/wide", ".gpu/efl", ".gpu/set"]; timeout 590 s.
set -u
d=$(dirname "$0")
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
if echo "$name" | grep -q H200; then
	bash "$d/../2026-12-06-h100-wide-pick/with-others.sh"
else
	bash "$d/../PLANNED-fp8-method/check.sh"
	left=$((560 - SECONDS))
	if [ "$left" -gt 250 ]; then
		DEADLINE=$((left - 40)) bash "$d/../PLANNED-fp8-method/sets.sh"
	else
		echo "not enough time left for the set ($left s): run ../PLANNED-fp8-method/sets.sh next"
	fi
fi
