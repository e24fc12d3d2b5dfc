#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/l2h/gm.txz, main's bin/gemmalone (the
# SYMMTUNE_DIAG_L2_PROMOTION diagnostic included). Run from the checkout's root; carry [".gpu/l2h"].
set -euo pipefail
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/gemmalone" ./bench/gemmalone
mkdir -p .gpu/l2h && tar cJf .gpu/l2h/gm.txz -C "$t" bin
ls -la .gpu/l2h
