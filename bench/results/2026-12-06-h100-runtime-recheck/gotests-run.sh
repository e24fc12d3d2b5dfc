#!/bin/bash
# Written 2026-12-06 03:05 UTC, after fix-run.sh's run on 1 x H100 (02:40 UTC): there
# TestEvictedCloseDuringCapture passed on the runtime before the fix too, so it did not show the failure.
# Now it waits, inside the capture, until the engine's thread has run the evictions' closes, and runs
# for agmm and matmulrs (the serving check failed in a captured matmul_reduce_scatter). Each test and
# kernel in its own process (a stopped runtime fails the next test), old runtime (c605011) and new.
# Bundle: build.sh (.gpu/fix/libops.txz); carry [".gpu/fix"]. Outputs: one tarball.
set -u
R=/tmp/gotests; mkdir -p $R /tmp/fx && tar xJf .gpu/fix/libops.txz -C /tmp/fx
for tn in 'TestEvictedCloseDuringCapture$/^agmm$' 'TestEvictedCloseDuringCapture$/^matmulrs$' 'TestAllreduceRetireDuringCapture$'; do
	for v in old new; do
		f=$R/$(echo "$tn" | tr -dc 'A-Za-z')-$v.txt
		(cd internal/libops && timeout 150 /tmp/fx/bin/libops-$v.test -test.count=1 -test.v -test.run "^$tn") > $f 2>&1
		echo "$tn ($v) rc $? at $SECONDS: $(grep -E '^ *(--- )|capture|stopped|closes' $f | head -6 | cut -c1-220 | tr '\n' ' ')"
	done
done
tar czf $OUT/gotests.tgz -C /tmp gotests
