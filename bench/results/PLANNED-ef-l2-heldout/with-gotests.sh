#!/bin/bash
# One device call for both checks owed at 03:00 UTC 2026-12-06 (device time was short): the runtime's Go
# tests (2026-12-06-h100-runtime-recheck/gotests-run.sh, about 15 s) then this folder's run.sh.
# Build both bundles first (here): bash bench/results/2026-12-06-h100-runtime-recheck/build.sh;
# bash bench/results/PLANNED-ef-l2-heldout/build.sh. carry [".gpu/fix", ".gpu/efl2"].
bash bench/results/2026-12-06-h100-runtime-recheck/gotests-run.sh
bash "$(dirname "$0")/run.sh"
