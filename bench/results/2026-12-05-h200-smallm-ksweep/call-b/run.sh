#!/bin/bash
# Call B (2026-12-05): two diagnostics for the DRAM-bound 64-row tile, branch tma-hints (12d3405) built
# here into .gpu/gemm/th.txz (CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o D/bin/gemmalone
# ./bench/gemmalone; tar cJf .gpu/gemm/th.txz -C D bin); carry [".gpu/gemm"]. Off by default, set per
# process with gemmalone -extra: B prefetched into L2 16 k-blocks ahead of the one the producer loads
# (B_PREFETCH=16: twice the ring's depth of B in flight) and B loaded evict-first (B_EVICT_FIRST=1).
# Four variants (none, prefetch, evict-first, both), each its own process per shape (the ratio is to
# cuBLASLt's best timed in the same process), in two rounds of opposite order; 0.2 s windows; shapes
# fixed before the run: 64 x 14336 x 4096, 64 x 8192 x 8192, 64 x 28672 x 8192, 128 x 14336 x 4096,
# 64 x 7168 x 8192; bf16 and FP8 row scales; tiles 64x128:s8:pp and 64x64:s10:pp (the untuned ones).
set -u
mkdir -p /tmp/t && tar xJf .gpu/gemm/th.txz -C /tmp/t
export SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/th; mkdir -p $R
S=64x14336x4096,64x8192x8192,64x28672x8192,128x14336x4096,64x7168x8192
T=64x128:s8:c2:g8:pp,64x64:s10:c2:g8:pp
V=("" "-DB_PREFETCH=16" "-DB_EVICT_FIRST=1" "-DB_PREFETCH=16 -DB_EVICT_FIRST=1")
N=("none" "pf16" "ef" "pf16ef")
for round in 1 2; do
	order="0 1 2 3"; [ $round = 2 ] && order="3 2 1 0"
	for d in bf16 e4m3_row; do
		for i in $order; do
			timeout 60 /tmp/t/bin/gemmalone -dtype $d -shapes $S -tiles $T -sustain 0.2s -bt=false -extra "${V[$i]}" \
				> $R/$d-${N[$i]}-r$round.csv 2>> $R/err.txt
			echo "$d ${N[$i]} r$round rc $? at $SECONDS"
		done
	done
done
for d in bf16 e4m3_row; do for n in "${N[@]}"; do
	cat $R/$d-$n-r*.csv | grep ',fused,' | awk -F, -v t="$d $n" '{k=$1" "$3; s[k]+=$8; c[k]++} END{for(k in s) printf "%s %s %.3f\n", t, k, s[k]/c[k]}'
done; done | sort -k3,3 -k4,4 -k1,2
tar czf $OUT/th.tgz -C /tmp th
