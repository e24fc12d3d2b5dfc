#!/bin/bash
# Call D: the set's shapes whose untuned pick changed and were not timed with it (short loops), two rounds;
# the reduce-scatter epilogue's cost in FP8 (-rs), never measured.
set -u
mkdir -p /tmp/x && tar xJf .gpu/c.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
mkdir -p $OUT/d
SET=full SHAPES="1024x8192x1024 4096x8192x1024 16384x8192x1024" TILES=default,128x256:s4:c2:g8,128x256:s4:c2:g8:cl2 DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=30 DEADLINE=50 OUT=$OUT/d/b timeout 70 bash bench/gemmalone-56.sh > $OUT/d/b.log 2>&1
echo "b done at $SECONDS"
SET=full SHAPES="1024x8192x1024 1024x8192x2048" TILES=default,128x256:s4:c2:g8 DTYPES=e4m3 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=30 DEADLINE=45 OUT=$OUT/d/e timeout 65 bash bench/gemmalone-56.sh > $OUT/d/e.log 2>&1
echo "e done at $SECONDS"
for d in e4m3 e4m3_row; do
  timeout 45 $BIN/gemmalone -dtype $d -shapes 8192x3584x8192,4096x8192x8192,16384x8192x2048 -tiles default -rs -sustain 0.2s -bt=false > $OUT/d/rs-$d.csv 2> $OUT/d/rs-$d.err
  echo "rs $d rc $? at $SECONDS"
done
