#!/bin/bash
# Call A (2026-12-05), branch cluster-n (2eff6a5) built here into .gpu/gemm/cn.txz:
#   git worktree add /tmp/wt-cn cluster-n && ln -s "$PWD/.cuda" /tmp/wt-cn/.cuda && (cd /tmp/wt-cn &&
#   CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o /tmp/gc/bin/gemmalone ./bench/gemmalone) && tar cJf .gpu/gemm/cn.txz -C /tmp/gc bin
# run with carry [".gpu/gemm"]. Clusters along N (:cn2, :cn4: A shared by TMA multicast) at small M,
# where every CTA reads all of A. (1) Correct on ragged shapes where a cluster's last tiles are partly or
# wholly past N, M or K (gemmalone checks every tile against float64 before timing it). (2) The small-M
# ping-pong tiles with and without them against cuBLASLt's best, bf16 and FP8 row scales, 0.2 s
# windows, two rounds (tiles reversed in the second), six shapes fixed here before the run. Keep rule,
# fixed before the run: a :cn tile enters the small-M default only if it is ahead of the same tile
# without clusters on at least 5 of the 6 shapes in each dtype, averaged over the rounds, and behind by
# no more than 1% on any. (3) ncu of 64x14336x4096 bf16: DRAM throughput with and without.
set -u
mkdir -p /tmp/c && tar xJf .gpu/gemm/cn.txz -C /tmp/c
export BIN=/tmp/c/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/cn; mkdir -p $R
T=64x128:s8:c2:g8:pp,64x128:s8:c2:g8:pp:cn2,64x128:s8:c2:g8:pp:cn4,64x64:s10:c2:g8:pp,64x64:s10:c2:g8:pp:cn2
for d in bf16 e4m3_row; do
	timeout 90 $BIN/gemmalone -dtype $d -shapes 64x1160x4096,100x14336x4096,64x392x2048,257x7168x1000 -tiles $T,128x256:s4:c2:g8:cn2 -iters 5 -warmup 2 -bt=false >> $R/ragged-$d.csv 2>> $R/err.txt
	echo "ragged $d rc $? at $SECONDS"
done
grep -h 'fused' $R/ragged-*.csv | cut -d, -f1-6
S="64x14336x4096 64x8192x8192 64x28672x8192 128x14336x4096 256x8192x8192 64x7168x8192"
for d in bf16 e4m3_row; do
	OUT=$R/$d SET=small SHAPES="$S" DTYPES=$d TILES=default,$T SUSTAIN=0.2s ROUNDS=2 PER_SHAPE=40 DEADLINE=150 \
		bash bench/gemmalone-56.sh > $R/$d.log 2>&1
	echo "$d at $SECONDS"
	tail -n 40 $R/$d.log | grep '^| [0-9]' | cut -c1-220
done
M="--metrics dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum"
for t in 64x128:s8:c2:g8:pp 64x128:s8:c2:g8:pp:cn2 64x128:s8:c2:g8:pp:cn4; do
	OUT=$R SHAPE=64x14336x4096 TILES=$t DTYPE=bf16 NO_CUBLAS=1 NCU_ARGS="$M" timeout 60 bash bench/experiments/ncu-gemm.sh > $R/ncu-$t.log 2>&1
	echo "ncu $t at $SECONDS"; grep -E "dram__|lts__|gpu__time" $R/ncu-$t.log | head -6
done
tar czf $OUT/cn.tgz -C /tmp cn
