#!/bin/bash
# Builds run-old.sh's bundle here (Go needed, no GPU): .gpu/setold/gm.txz, call C's build (90f1af8):
# bin/gemmalone and its bench/gemmalone-56.sh. Run from the checkout's root; carry [".gpu/setold"].
set -euo pipefail
root=$PWD t=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$t/wt" 2>/dev/null || true; rm -rf "$t"' EXIT
git worktree add -q "$t/wt" 90f1af8
(cd "$t/wt" && CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/b/bin/gemmalone" ./bench/gemmalone &&
	cp bench/gemmalone-56.sh "$t/b/gemmalone-56-old.sh")
mkdir -p .gpu/setold && tar cJf .gpu/setold/gm.txz -C "$t/b" bin gemmalone-56-old.sh
ls -la .gpu/setold
