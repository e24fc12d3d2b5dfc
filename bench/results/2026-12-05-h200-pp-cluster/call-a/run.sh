#!/bin/bash
# Written 2026-12-04 on branch pp-cl2, run 2026-12-05 from main (33ca574) with the branch's build (.gpu/pp.txz); the bf16 timings dropped to fit one call.
# Ping-pong tiles in clusters of two (B multicast), this branch's build: (1) correct on ragged shapes
# where a cluster's second tile row is partly or wholly past M (gemmalone checks every tile against
# float64 before timing it); (2) 128x128:pp:cl2 against 128x128:pp and the cooperative 128x128:cl2 at
# the short-loop shapes where the ping-pong tile is the untuned pick, FP8 row and tensor scales and
# bf16, 0.2 s windows, two rounds (tiles reversed in the second); (3) ncu of pp and pp:cl2 at 16384 x
# 8192 x 1024 e4m3_row: L2 read requests and sectors, and the xbar bytes (lts__t_sectors counted 27%
# fewer bytes than the SMs received even without clusters on 2026-11-26, so read all three).
# Build here: CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o D/bin/gemmalone ./bench/gemmalone
# && tar cJf .gpu/pp.txz -C D bin; run with carry [".gpu"].
set -u
mkdir -p /tmp/x && tar xJf .gpu/pp.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/pp; mkdir -p $R
T=128x128:s6:c2:g4:pp,128x128:s6:c2:g4:pp:cl2,128x128:s6:c2:g8:cl2
for d in e4m3_row bf16; do
	timeout 90 $BIN/gemmalone -dtype $d -shapes 1000x8192x1024,2900x4096x2048,129x1280x2048,4224x3584x3696 -tiles $T -iters 5 -warmup 2 -bt=false >> $R/ragged-$d.csv 2>> $R/err.txt
	echo "ragged $d rc $? at $SECONDS"
done
S="16384x8192x1024 2048x28672x1024 8192x8192x2048 4096x8192x1024"
for d in e4m3_row e4m3; do
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d TILES=$T SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=50 DEADLINE=125 \
		bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"
done
M="--metrics lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_bytes.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second"
for t in 128x128:s6:c2:g4:pp 128x128:s6:c2:g4:pp:cl2; do
	OUT=$R SHAPE=16384x8192x1024 TILES=$t DTYPE=e4m3_row NO_CUBLAS=1 NCU_ARGS="$M" timeout 100 bash bench/experiments/ncu-gemm.sh > $R/ncu-$t.log 2>&1
	echo "ncu $t at $SECONDS"
done
for d in e4m3_row e4m3 bf16; do tail -n 30 $R/$d.log | grep '^| [0-9]' | cut -c1-220; done
grep -h 'fused' $R/ragged-*.csv | cut -d, -f1-6
tar czf $OUT/pp.tgz -C /tmp pp
