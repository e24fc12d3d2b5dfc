#!/bin/bash
# Builds run.sh's bundle here (Go needed, no GPU): .gpu/efl/gm.txz, main's bin/gemmalone. Run from the
# checkout's root; carry [".gpu/efl"].
set -euo pipefail
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/gemmalone" ./bench/gemmalone
mkdir -p .gpu/efl && tar cJf .gpu/efl/gm.txz -C "$t" bin
ls -la .gpu/efl
