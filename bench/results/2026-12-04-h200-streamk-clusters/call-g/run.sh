#!/bin/bash
# Call G (2026-12-04 evening, call F's build): (1) whether the window each kernel is timed over moves
# the ratio: call F timed 4096x57344x8192 at 0.985x cuBLASLt with 2 s windows where 0.2 s windows
# gave 0.89-0.93 (calls C, E). Six shapes, each timed 0.2 s, 2 s, 0.2 s in turn (one process each,
# as bench/gemmalone-56.sh runs them). (2) ragged token counts (call F's one round at 0.1 s put
# 128x256:cl2 10% behind 256x160 and :cl2:st at 5000 and 12000 rows): six shapes, two rounds, 0.2 s.
set -u
mkdir -p /tmp/x && tar xJf .gpu/f.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/g; mkdir -p $R/window
for s in 4096x57344x8192 16384x14336x8192 16384x5120x8192 8192x8192x8192 1024x28672x8192 4096x14336x4096; do
	for w in 0.2s 2s 0.2s; do
		[ $SECONDS -gt 250 ] && break 2
		echo "# window $w" >> $R/window/$s.csv
		timeout 60 $BIN/gemmalone -shapes $s -tiles default,128x256:s4:c2:g8:cl2 -sustain $w -bt=false >> $R/window/$s.csv 2>> $R/window/err.txt
	done
done
echo "window at $SECONDS"
S="5000x8192x8192 12000x8192x4096 9999x10240x8192 2500x28672x8192 1500x8192x8192 600x14336x4096"
OUT=$R/ragged SET=small SHAPES="$S" DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=200 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:cl2:st,128x256:s4:c2:g8,256x160:s4:c2:g8,256x160:s4:c2:g8:cl2,128x160:s6:c2:g8,128x128:s6:c2:g4:pp \
	bash bench/gemmalone-56.sh > $R/ragged.log 2>&1
echo "ragged at $SECONDS"
tar czf $OUT/g.tgz -C /tmp g
