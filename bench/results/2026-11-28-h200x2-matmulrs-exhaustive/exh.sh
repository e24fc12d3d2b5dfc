#!/bin/bash
# Exhaustive references for issue 44's matmulrs cells at W=2, resumable across calls.
# State (logs, done markers) in .scratch/exst (carried in), written back to $R/exst.tgz.
# CELLS: "dtype:M:iters" in order. DEADLINE: seconds from start for this call's work.
python3 -c "import tarfile;tarfile.open('.scratch/slim-rs.txz').extractall('/tmp')"
R=$OUT; export OUT=$R/b BIN=/tmp/bin; export LOGS=$R/b/exst; mkdir -p $LOGS
[ -d .scratch/exst ] && cp -r .scratch/exst/. $LOGS/ && (cd $LOGS && for f in *.jsonl.xz; do [ -f "$f" ] && xz -d "$f"; done)
. bench/lib.sh
export CUDA_VISIBLE_DEVICES=0,1
T0=$(date +%s); DEADLINE=${DEADLINE:-560}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
nvidia-smi -L; date -u +%T
for cell in ${CELLS:-e4m3:8192:20 bf16:16384:10 e4m3:16384:10}; do
	IFS=: read -r dt m it <<<"$cell"
	name=matmulrs-$dt-$m
	[ -f $LOGS/done-$name ] && { echo "$name: done earlier"; continue; }
	log=$LOGS/exh-$name.jsonl
	if [ ! -f $LOGS/complete-$name ]; then
		[ "$dt" = e4m3 ] && [ "$m" = 8192 ] && [ ! -f $log ] &&
			xz -dc bench/results/2026-11-28-h200x2-fp8-exhaustive/call8/ref-matmulrs-e4m3-8192.jsonl.xz >$log
		t=$(($(left) - 20)); [ $t -lt 30 ] && break
		res=(--log $log); [ -f $log ] && res=(--resume $log)
		s=$(date +%s)
		timeout -k 30 $t $BIN/symmtune search --plugin-dir $BIN --backend cuda --kernel matmulrs --world 2 --dtype $dt \
			--shape m=$m,n=3584,k=8192 --exhaustive --iters $it --warmup 2 "${res[@]}" --cache $LOGS/exh-$name.toml \
			>>$LOGS/exh-$name.txt 2>&1
		rc=$?
		echo "$name exhaustive: rc $rc, $(($(date +%s) - s)) s; $(grep -h 'trials:' $LOGS/exh-$name.txt | tail -1 | cut -c1-120)"
		[ $rc = 0 ] && touch $LOGS/complete-$name
	fi
	[ -f $LOGS/complete-$name ] || break
	need=150; [ $m = 16384 ] && need=210
	[ $(left) -lt $need ] && { echo "$name: check next call ($(left) s left)"; break; }
	s=$(date +%s)
	SEARCH_FROM=bench/results/2026-11-28-h200x2-search-check/$dt REF_LOG=$log DTYPE=$dt TOGETHER=1 MODES= CHOICE=0 \
		BEST=$([ $dt = e4m3 ] && echo 6 || echo 4) KERNELS=matmulrs SHAPES=${m}x3584x8192 timeout $(($(left) - 5)) \
		bash bench/search-check.sh 2 2>&1 | grep -v "Warning\|warn" | grep "^|\|search wall\|rc\|fail" | head -12
	echo "$name check: $(($(date +%s) - s)) s"
	[ -s $OUT/search-check-w2/summary.md ] && touch $LOGS/done-$name
	mkdir -p $LOGS/check-$name && mv $OUT/search-check-w2/* $LOGS/check-$name/ 2>/dev/null
done
date -u +%T
(cd $LOGS && xz -T4 -f *.jsonl check-*/*.jsonl 2>/dev/null)
tar czf $R/exst.tgz -C $R/b exst && rm -rf $R/b
ls -la $R
