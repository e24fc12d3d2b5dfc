#!/bin/bash
# Ran as planned on 1 x H100, 2026-12-06 04:22 UTC (RUNTIME=1, 145 s; the whole set in the next call, 339 s):
# ../2026-12-06-h100-ef-l2-heldout.md.
# One device call for the checks owed at 03:00 UTC 2026-12-06 (device time was short): the runtime's Go
# tests (2026-12-06-h100-runtime-recheck/gotests-run.sh, about 15 s), this folder's run.sh (about 100 s),
# and with FULLSET=1 the whole bf16 set with main's rule (2026-12-06-h100-bf16-set-retime/run.sh, about
# 330 s; on an H200 that is the issue's own count). Three tarballs come back.
# Build the bundles first (here): bash bench/results/2026-12-06-h100-runtime-recheck/build.sh;
# bash bench/results/2026-12-06-h100-ef-l2-heldout/build.sh; with FULLSET=1 also
# bash bench/results/2026-12-06-h100-bf16-set-retime/build.sh.
# carry [".gpu/fix", ".gpu/efl2"] (and ".gpu/set" with FULLSET=1).
# RUNTIME=1 adds runtime-main.sh (main's library in the serving check and runtime_check.py, about 90 s).
bash bench/results/2026-12-06-h100-runtime-recheck/gotests-run.sh
bash "$(dirname "$0")/run.sh"
if [ "${RUNTIME:-0}" = 1 ]; then bash "$(dirname "$0")/runtime-main.sh"; fi
if [ "${FULLSET:-0}" = 1 ]; then bash bench/results/2026-12-06-h100-bf16-set-retime/run.sh; fi
