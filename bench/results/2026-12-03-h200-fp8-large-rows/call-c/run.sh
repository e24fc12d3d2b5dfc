#!/bin/bash
# Call C: held-out check (shapes outside issue 56's set) of the rule's two changes since call B's build:
# short main loops take the ping-pong tile, FP8 rows off 32-byte sectors cluster from 1,024 rows; and of
# FP8 from 4,096 rows with bf16's rule. Two paired rounds; default (new) against the old picks.
set -u
mkdir -p /tmp/x && tar xJf .gpu/c.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/res; mkdir -p $R
SET=full SHAPES="2048x6144x1024 3072x11008x1024 6144x13824x1024 8192x4096x1024 3072x3072x1024 1024x11008x1024" TILES=default,128x256:s4:c2:g8,128x256:s4:c2:g8:cl2,256x160:s4:c2:g8 DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=90 OUT=$R/b timeout 110 bash bench/gemmalone-56.sh > $R/b.log 2>&1
echo "b done at $SECONDS"
SET=full SHAPES="2048x13824x1536 6144x13824x3072 2048x6144x3696 6144x6144x2048 8192x6144x5120 1024x4096x2048 3072x11008x3696 8192x11008x1536 6144x4096x3696 3072x11008x1024 6144x11008x5120" TILES=default,128x256:s4:c2:g4,128x256:s4:c2:g8,128x128:s6:c2:g4:pp DTYPES=e4m3 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=50 DEADLINE=260 OUT=$R/e timeout 290 bash bench/gemmalone-56.sh > $R/e.log 2>&1
echo "e done at $SECONDS"
SET=full SHAPES="6144x13824x3072 2048x6144x3696 1024x8192x3696 8192x11008x1536 1024x4096x2048" TILES=default,128x256:s4:c2:g4,128x256:s4:c2:g8,128x128:s6:c2:g4:pp DTYPES=e4m3_row SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=50 DEADLINE=110 OUT=$R/r timeout 135 bash bench/gemmalone-56.sh > $R/r.log 2>&1
echo "r done at $SECONDS"
tar czf $OUT/c.tgz -C $R .
