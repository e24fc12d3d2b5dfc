#!/bin/bash
# Written 2026-12-06 15:05 UTC, before any run (as PLANNED-sass-fp8/); ran 17:27 UTC on 1 x H100
# (2026-12-06-h100-sass-fp8.md). Issue 56: two stalls the day's ncu tables could not place (2026-12-06-h100-ov.md and
# 2026-12-06-h100-pp-group-fp8.md), measured where they fall, instruction by instruction:
#   - the FP8 ping-pong tile: larger swizzle groups read fewer DRAM bytes (g16 0.82 of g4's) yet keep the
#     tensor pipe busy 68% against 90%, with long-scoreboard stalls up from 9 to 16: on which loads?
#   - the cooperative 128x256 tile in clusters, the rule's tile at many waves: after the overlapped
#     epilogue's 1.3 points, what holds its tensor pipe at 92% against cuBLASLt FP8's 99%?
#     Call F of 2026-12-06-h100-ncu-table.md has this tile's SASS page, from its first launch
#     (sass-call-f.tgz; bench/experiments/ncu_sass.py, worked out 2026-12-06 15:00): the main loop's
#     samples are mostly the wgmma wait and issue (tensor work), 4.3% are consumers waiting for a stage's
#     TMA (the branch after the FULL barrier's try-wait, long scoreboard; bf16 5.5%), 5.6% the epilogue,
#     25% the producer's idle warps at the exit's cluster barrier. This call takes a later launch.
# No rule: a diagnosis for the docs, and the next lead's premise. One call, about 200 s, main's bundle
# (.gpu/bal, as PLANNED-sustained; build in its header); carry [".gpu/bal"]; timeout 400 s.
#   1. bench/experiments/ncu-gemm.sh at 8192^3, FP8 row scales: cuBLASLt's first kernel and the tiles
#      128x256:s4:c2:g8:cl2, 128x128:s6:c2:g4:pp and 128x128:s6:c2:g16:pp, one launch each (the
#      second: --launch-skip 1, as the first launch of a ping-pong tile ran with its SMs 37% apart),
#      warp state, source counters (per-instruction stall samples), memory;
#   2. bench/experiments/ncu_sass.py on each SASS page: samples by stall reason, by how often an
#      instruction ran (main loop, epilogue, producer, setup) and the top 25 instructions.
set -u
R=/tmp/sass
. bench/experiments/device-setup.sh .gpu/bal/gm.txz $R
OUT=$R SHAPE=8192x8192x8192 DTYPE=e4m3_row NCU_ARGS="--launch-skip 1" \
	TILES=128x256:s4:c2:g8:cl2,128x128:s6:c2:g4:pp,128x128:s6:c2:g16:pp timeout 330 bash bench/experiments/ncu-gemm.sh > $R/ncu.log 2>&1
echo "ncu rc $? at $SECONDS"
for f in $R/ncu/*-sass.csv; do
	[ -f "$f" ] || continue
	echo "## $(basename "$f" -sass.csv)"
	python3 bench/experiments/ncu_sass.py "$f" --top 25 > "${f%.csv}.md" 2>&1
	head -40 "${f%.csv}.md"
	gzip -9 "$f"
done
rm -f $R/ncu/*.ncu-rep  # large; the details and SASS pages stay
du -sh $R
tar czf $OUT/sass.tgz -C /tmp sass
