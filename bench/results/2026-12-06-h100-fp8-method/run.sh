#!/bin/bash
# Written 2026-12-06 08:40 UTC (as PLANNED-next/run.sh); ran 09:02 on 1 x H100 (../2026-12-06-h100-fp8-method.md): the session's first GEMM call, whichever card came, so that
# no start is spent on the wrong script (a call naming nvidia-h200 often gets an H100).
#   On an H200: ../2026-12-06-h100-wide-pick/with-others.sh (about 530 s): the wide pick and evict-first's
#     40 MiB bound held out there, then the whole bf16 set, the issue's own count (docs/results-gemm.md,
#     "Next, for a GPU", items 1-3).
#   On an H100: first (about 40 s) ncu of our FP8 128x128 ping-pong tiles beside the rule's tile and
#     cuBLASLt FP8's kernel (a 128x128 tile of six stages, nvjet_sm90_qqtst_128x128_128x6_1x2) at 8192^3 and
#     4096 x 14336 x 4096, row scales: ours ran 0.96 of the rule's tile there (2026-12-06-h100-fp8-pp-large.md) with a
#     tile of the same size; cycles x clock, DRAM bytes and stalls say what cuBLASLt's does that ours does
#     not (docs/results-gemm.md, item 9). No keep rule: a profile. Then
#     check.sh (about 180 s): which reference mode counts the FP8 sets;
#     then, in the same call, the row-scale set lean in two rounds if time is left (DEADLINE from what is
#     left), else that is the second call (sets.sh).
# Bundles: bash bench/results/2026-12-06-h100-wide-pick/build.sh; bash bench/results/2026-12-06-h100-ef-l2-lower/build.sh;
# bash bench/results/2026-12-06-h100-fp8-set-retime/build.sh (gemmalone unchanged since cd5e9de: the .gpu/ ones
# built that day serve). Carry [".gpu/wide", ".gpu/efl", ".gpu/set"]; timeout 590 s.
set -u
d=$(dirname "$0")
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name"
if echo "$name" | grep -q H200; then
	bash "$d/../2026-12-06-h100-wide-pick/with-others.sh"
else
	mkdir -p /tmp/gm && tar xJf .gpu/set/gm.txz -C /tmp/gm
	SYMMTUNE_CUBIN_CACHE=/tmp/cubin BIN=/tmp/gm/bin OUT=/tmp/ncufp8pp SHAPES="8192x8192x8192 4096x14336x4096" DTYPE=e4m3_row \
		TILES="default,128x128:s6:c2:g4:pp,128x128:s6:c2:g8:pp" PER_SHAPE=40 DEADLINE=90 bash bench/ncu-gemm.sh > /tmp/ncufp8pp.log 2>&1
	echo "ncu fp8 pp rc $? at $SECONDS"; sed -n '5,12p' /tmp/ncufp8pp/ncu-gemm/table.md
	mkdir -p /tmp/ncufp8pp && cp /tmp/ncufp8pp.log /tmp/ncufp8pp/ && tar czf "$OUT/ncufp8pp.tgz" -C /tmp ncufp8pp
	bash "$d/check.sh"
	left=$((560 - SECONDS))
	if [ "$left" -gt 250 ]; then
		DEADLINE=$((left - 40)) bash "$d/sets.sh"
	else
		echo "not enough time left for the set ($left s): run sets.sh next"
	fi
fi
