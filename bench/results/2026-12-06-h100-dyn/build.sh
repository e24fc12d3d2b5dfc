#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/dyn/gm.txz, bin/gemmalone of main at 091432a with
# dyn.patch applied (the dynamic tiles, `:dyn`; kernels of every other tile as on main, but their kernel
# versions change with the source, which is why the patch is not on main). Run from the checkout's root;
# carry [".gpu/dyn"].
set -euo pipefail
d=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'git worktree remove --force "$t/wt" 2>/dev/null; rm -rf "$t"' EXIT
git worktree add -q --detach "$t/wt" 091432a
git -C "$t/wt" apply "$d/dyn.patch"
(cd "$t/wt" && CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/gemmalone" ./bench/gemmalone)
mkdir -p .gpu/dyn && tar cJf .gpu/dyn/gm.txz -C "$t" bin
ls -la .gpu/dyn
