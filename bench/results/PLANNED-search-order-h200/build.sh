#!/bin/sh
# Builds .gpu/order/s.txz for run.sh beside this: main's CLI, the CUDA agmm and matmulrs plugins and
# libsymmtune.so (what bench/search-check.sh and bench/torch_paired.py need), xz, under the 64 MiB carry.
set -eu
t=$(mktemp -d)
mkdir -p "$t/bin/cuda" "$t/python/symmtune" .gpu/order
make -s lib
cp python/symmtune/libsymmtune.so "$t/python/symmtune/"
go build -ldflags "-s -w" -o "$t/bin/symmtune" ./cmd/symmtune
for p in agmm matmulrs; do
	CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o "$t/bin/cuda/symmtune-plugin-$p" ./plugins/$p
done
# xz -9e: its 64 MiB window sees the three Go binaries' shared runtime (13 MB against 23 MB at tar's -6).
tar cf - -C "$t" bin python | xz -9e -T2 > .gpu/order/s.txz
rm -rf "$t"
ls -la .gpu/order/s.txz
