#!/bin/bash
# One device call for what issue 56 owes at the end of 2026-12-06 (written 05:10 UTC, before any run):
# this folder's run.sh (about 100 s), ../PLANNED-ef-l2-lower/run.sh (about 90 s), and on an H200 only
# the whole bf16 set with main's rule (../2026-12-06-h100-bf16-set-retime/run.sh, about 340 s): the
# issue's own count, 58 of 129 there at call C (91 on 1 x H100 on 2026-12-06). Three tarballs come back.
# Build here first: bash bench/results/PLANNED-wide-pick/build.sh; bash bench/results/PLANNED-ef-l2-lower/build.sh;
# bash bench/results/2026-12-06-h100-bf16-set-retime/build.sh. Carry [".gpu/wide", ".gpu/efl", ".gpu/set"].
# Timeout 600 s.
d=$(dirname "$0")
bash "$d/run.sh"
bash "$d/../PLANNED-ef-l2-lower/run.sh"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
	bash "$d/../2026-12-06-h100-bf16-set-retime/run.sh"
else
	echo "not an H200: the whole set is not re-counted in this call"
fi
