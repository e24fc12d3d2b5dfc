#!/bin/bash
# Call B: a held-out check of the swizzle-group model (group rows ~ sqrt(tiles in flight x BN / BM),
# the rows and columns of one wave's tiles least) that call A's 128x256 data suggested (g16 unclustered,
# g8 in clusters of two): each tile at its current group and at the model's, on 8 shapes outside
# call A and issue 56's set, bf16, three rounds (order reversed in the second), 0.2 s a kernel.
set -u
mkdir -p /tmp/x && tar xJf .gpu/a.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=$OUT; mkdir -p $R/bf16
S="8192x14336x8192 12288x8192x8192 8192x5120x8192 16384x11008x4096 8192x7392x8192 8192x8192x1024 16384x4096x2048 6144x16384x4096"
OUT=$R/bf16 SET=small SHAPES="$S" DTYPES=bf16 SUSTAIN=0.2s ROUNDS=3 PER_SHAPE=40 DEADLINE=330 \
	TILES=default,128x256:s4:c2:g8:cl2,128x256:s4:c2:g8:st,128x256:s4:c2:g16:st,128x224:s5:c2:g4,128x224:s5:c2:g16,128x128:s6:c2:g4:pp,128x128:s6:c2:g16:pp,128x160:s6:c2:g8,128x160:s6:c2:g16,256x160:s4:c2:g8,256x160:s4:c2:g16 \
	bash bench/gemmalone-56.sh > $R/bf16.log 2>&1
tail -n 3 $R/bf16.log
cd $R && tar czf /tmp/b.tgz bf16 bf16.log && rm -rf $R/bf16 && mv /tmp/b.tgz $R/b.tgz
