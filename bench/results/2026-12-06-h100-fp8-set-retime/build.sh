#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/set/gm.txz, main's bin/gemmalone (the same
# bundle as 2026-12-06-h100-bf16-set-retime/build.sh). Run from the checkout's root; carry [".gpu/set"].
exec bash "$(dirname "$0")/../2026-12-06-h100-bf16-set-retime/build.sh"
