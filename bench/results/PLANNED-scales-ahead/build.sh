#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/sa/gm.txz, bin/gemmalone of main at 52d0d47 with
# sa.patch applied (the scales-ahead tiles, `:saN`; every other tile's kernel as on main, but the kernel
# versions change with the source, which is why the patch is not on main). Run from the checkout's root;
# carry [".gpu/sa"].
set -euo pipefail
d=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
trap 'git worktree remove --force "$t/wt" 2>/dev/null; rm -rf "$t"' EXIT
git worktree add -q --detach "$t/wt" 52d0d47
git -C "$t/wt" apply "$d/sa.patch"
(cd "$t/wt" && CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/gemmalone" ./bench/gemmalone)
mkdir -p .gpu/sa && tar cJf .gpu/sa/gm.txz -C "$t" bin
ls -la .gpu/sa
