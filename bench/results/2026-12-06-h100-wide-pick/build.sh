#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/wide/gm.txz, main's bin/gemmalone. Run from the
# checkout's root; carry [".gpu/wide"].
set -euo pipefail
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/gemmalone" ./bench/gemmalone
mkdir -p .gpu/wide && tar cJf .gpu/wide/gm.txz -C "$t" bin
ls -la .gpu/wide
