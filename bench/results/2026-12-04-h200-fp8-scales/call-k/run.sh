#!/bin/bash
# Call K (2026-12-04 night, call J's build): why the ping-pong FP8 tile runs about 9% slower with
# row scales than tensor scales back to back at 16384x8192x1024 (calls E, F, I), when ncu's single
# launches (call J) counted the row-scale kernel 2% fewer cycles. (1) Each dtype with both tiles,
# launched as programmatic dependents (pdl) and plainly, alternating, in 0.2 s windows; (2) the
# same in gemmalone's per-call mode (50 calls between events, the median); (3) clocks and power
# every 100 ms while the ping-pong tile runs 2 s back to back with each dtype, twice.
set -u
mkdir -p /tmp/x && tar xJf .gpu/j.txz -C /tmp/x
export BIN=/tmp/x/bin SYMMTUNE_CUBIN_CACHE=/tmp/cubin
R=/tmp/k; mkdir -p $R
S=16384x8192x1024 T=128x128:s6:c2:g4:pp,128x256:s4:c2:g8:cl2
for d in e4m3_row e4m3 e4m3_row e4m3; do
	timeout 60 $BIN/gemmalone -dtype $d -shapes $S -tiles $T -launch pdl,plain,plain,pdl -sustain 0.2s -bt=false >> $R/sustain-$d.csv 2>>$R/err.txt
	echo "sustain $d at $SECONDS rc $?"
done
for d in e4m3_row e4m3; do
	timeout 60 $BIN/gemmalone -dtype $d -shapes $S -tiles $T -launch pdl,plain,plain,pdl -iters 50 -warmup 10 -bt=false >> $R/iters-$d.csv 2>>$R/err.txt
	echo "iters $d at $SECONDS rc $?"
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > $R/smi.csv 2>&1 &
smi=$!
for d in e4m3_row e4m3 e4m3_row e4m3; do
	echo "$d $(date +%s.%N)" >> $R/power-times.txt
	timeout 60 $BIN/gemmalone -dtype $d -shapes $S -tiles 128x128:s6:c2:g4:pp -sustain 2s -bt=false >> $R/power-$d.csv 2>>$R/err.txt
	echo "end $(date +%s.%N)" >> $R/power-times.txt
done
kill $smi
echo "power at $SECONDS"
for f in $R/sustain-*.csv $R/iters-*.csv $R/power-*.csv; do echo "== $f"; grep ',fused' $f | cut -d, -f1-3,6,11 | cut -c1-120; done
tar czf $OUT/k.tgz -C /tmp k
