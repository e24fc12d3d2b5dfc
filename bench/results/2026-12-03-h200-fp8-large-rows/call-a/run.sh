#!/bin/bash
# Call A (2026-12-03 session 5): FP8 e4m3 from 4,096 rows, which tile? (family 128x256:g4 ran median 0.93x
# in call W). Then ncu at FP8 K=3696 against K=3584.
set -u
mkdir -p /tmp/x && tar xJf .gpu/a.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_LIB=/tmp/x/python/symmtune/libsymmtune.so PATH=/opt/torch/.venv/bin:$PATH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/res; mkdir -p $R
S="4096x1280x8192 4096x8192x8192 16384x5120x8192 4096x14336x4096 4096x2560x8192 4096x8192x1024 8192x8192x8192 4096x28672x8192 16384x1280x8192 4096x5120x8192 4096x8192x3584 12288x5120x5120 4096x10240x8192 16384x8192x4096 4096x7168x8192 4096x14336x8192 16384x3584x8192 4096x8192x28672 16384x14336x8192 4096x57344x8192 8192x3584x8192 16384x8192x14336 16384x28672x8192"
T=128x256:s4:c2:g4,128x256:s4:c2:g8:cl2,256x160:s4:c2:g8,128x256:s4:c2:g8,256x160:s4:c2:g8:cl2,128x224:s5:c2:g4,256x128:s4:c2:g8,128x128:s6:c2:g4:pp
SET=full SHAPES="$S" TILES=$T DTYPES=e4m3 SUSTAIN=0.2s PER_SHAPE=60 DEADLINE=400 OUT=$R/a timeout 440 bash bench/gemmalone-56.sh > $R/a.log 2>&1
echo "a done at $SECONDS"
SHAPES="4096x8192x3696 4096x8192x3584" DTYPE=e4m3 PER_SHAPE=45 DEADLINE=70 OUT=$R/n timeout 110 bash bench/ncu-gemm.sh > $R/n.log 2>&1
echo "n done at $SECONDS"
tar czf $OUT/a.tgz -C $R .
tail -5 $R/a.log
