#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/set/gm.txz, main's bin/gemmalone. Run from the
# checkout's root; carry [".gpu/set"].
set -euo pipefail
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/gemmalone" ./bench/gemmalone
mkdir -p .gpu/set && tar cJf .gpu/set/gm.txz -C "$t" bin
ls -la .gpu/set
