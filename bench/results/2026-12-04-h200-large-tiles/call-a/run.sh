#!/bin/bash
# Call A: the large shapes of issue 56's whole set where the untuned tile ran 0.89-0.97x cuBLASLt
# (call T of 2026-12-03, one round): whether stream-K (:st, unclustered) loses the cluster's
# multicast where the last wave is a small share (16384 rows, 31+ waves), and whether the swizzle
# group or 256x160 does better. bf16: 22 shapes from 4,096 rows, 8 tiles, two rounds (order reversed
# in the second); e4m3: 6 shapes, 5 tiles, two rounds. 0.2 s a kernel between cuBLASLt's best.
set -u
mkdir -p /tmp/x && tar xJf .gpu/a.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=$OUT; mkdir -p $R/bf16 $R/e4m3
BF="4096x5120x8192 4096x7392x8192 4096x8192x4096 4096x8192x28672 4096x14784x8192 4096x29568x8192 4096x57344x8192 4096x59136x8192 16384x5120x8192 16384x7168x8192 16384x7392x8192 16384x8192x2048 16384x8192x7168 16384x8192x7392 16384x8192x8192 16384x8192x14336 16384x8192x14784 16384x8192x28672 16384x14336x8192 16384x14784x8192 16384x57344x8192 16384x59136x8192"
OUT=$R/bf16 SET=small SHAPES="$BF" DTYPES=bf16 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=370 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:st,128x256:s4:c2:g16:cl2,128x256:s4:c2:g4:cl2,128x256:s4:c2:g16:st,256x160:s4:c2:g8,256x160:s4:c2:g8:cl2 \
	bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
tail -3 $R/bf16.log
E4="16384x8192x7168 16384x14336x8192 16384x5120x8192 4096x57344x8192 16384x8192x14784 4096x14784x8192"
OUT=$R/e4m3 SET=small SHAPES="$E4" DTYPES=e4m3 SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=150 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:st,128x256:s4:c2:g16:cl2,256x160:s4:c2:g8 \
	bash bench/gemmalone-56.sh > $R/e4m3.log 2>&1
tail -3 $R/e4m3.log
cd $R && tar czf $R/../a.tgz bf16 e4m3 bf16.log e4m3.log && rm -rf $R/bf16 $R/e4m3 && mv $R/../a.tgz $R/a.tgz
