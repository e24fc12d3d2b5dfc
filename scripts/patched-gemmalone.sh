#!/bin/sh
# patched-gemmalone.sh BASE PATCH NAME: builds bin/gemmalone of commit BASE with PATCH applied into the
# git-ignored .gpu/NAME/gm.txz, for an experiment whose kernel is not on main (bench/results/*/build.sh:
# a patch that changes a kernel's source changes the kernel versions, so it reaches main only when its
# rule says so). Here, with Go; no GPU. Run from the checkout's root; carry [".gpu/NAME"]; on the GPU
# machine: mkdir -p /tmp/gm && tar xJf .gpu/NAME/gm.txz -C /tmp/gm (bin/gemmalone).
set -eu
[ $# -eq 3 ] || { echo "usage: $0 BASE PATCH NAME" >&2; exit 2; }
base=$1 patch=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") name=$3
t=$(mktemp -d)
trap 'git worktree remove --force "$t/wt" 2>/dev/null; rm -rf "$t"' EXIT
git worktree add -q --detach "$t/wt" "$base"
git -C "$t/wt" apply "$patch"
(cd "$t/wt" && CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/gemmalone" ./bench/gemmalone)
mkdir -p ".gpu/$name" && tar cJf ".gpu/$name/gm.txz" -C "$t" bin
ls -la ".gpu/$name"
