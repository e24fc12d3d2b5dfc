#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/bal/gm.txz, gemmalone of main with cl4.patch applied
# (clusters of four; main's kernel versions stay as they are until a run has shown the tiles correct and
# worth it). Checks first that the patched tiles compile for sm_90a without spills and with main loops free
# of per-thread descriptor moves (make sass, NVRTC 12.4 fetched into .cuda/). Run from the checkout's root;
# carry [".gpu/bal"].
set -euo pipefail
d=$(cd "$(dirname "$0")" && pwd)
root=$(pwd)
w=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$w/tree" >/dev/null 2>&1 || true; rm -rf "$w"' EXIT
git worktree add -q --detach "$w/tree" HEAD
cd "$w/tree"
git apply "$d/cl4.patch"
go test -count=1 ./kernels/gemm/hopper/
ln -s "$root/.cuda" .cuda 2>/dev/null || true
make -s cuda-libs
make sass TILES='cl4'
CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$w/b/bin/gemmalone" ./bench/gemmalone
mkdir -p "$root/.gpu/bal" && tar cJf "$root/.gpu/bal/gm.txz" -C "$w/b" bin
ls -la "$root/.gpu/bal"
