#!/bin/bash
# Builds run.sh's bundles here (Go needed, no GPU), from the checkout's root; carry [".gpu/ef3"]:
#   new.txz: main's bin/gemmalone (evict-first and wave-width untuned tiles);
#   old.txz: bin/gemmalone of f888407, before both;
#   lib.txz: main's python/symmtune/libsymmtune.so, which program_kernels.py loads.
set -euo pipefail
root=$PWD t=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$t/wt" 2>/dev/null || true; rm -rf "$t"' EXIT
CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/new/bin/gemmalone" ./bench/gemmalone
git worktree add -q "$t/wt" f888407
(cd "$t/wt" && CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/old/bin/gemmalone" ./bench/gemmalone)
make -s lib
mkdir -p .gpu/ef3
tar cJf .gpu/ef3/new.txz -C "$t/new" bin
tar cJf .gpu/ef3/old.txz -C "$t/old" bin
tar cJf .gpu/ef3/lib.txz python/symmtune/libsymmtune.so
ls -la .gpu/ef3
