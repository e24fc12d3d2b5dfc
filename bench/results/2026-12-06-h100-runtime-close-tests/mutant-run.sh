#!/bin/bash
# Ran on 1 x H100, 2026-12-06 05:43 UTC: 2026-12-06-h100-runtime-close-tests.md (the evicted-unit test
# passed on the mutant too; the all-reduce test failed, as on the old runtime).
# Written 2026-12-06 05:43 UTC, before its run. TestEvictedCloseDuringCapture passed on the runtime
# before the fix (c605011) on 1 x H100 twice (05:40 and 05:44 UTC), with the evicted unit owning a
# graph: can it fail at all? Here main with no relaxed capture mode anywhere (the engine's thread and
# device.relaxed both in the default mode; .gpu/mut/mut.txz, built by hand (a worktree of main, two sed lines, go test -c -tags cuda) from main at 3e4d7da with
# those two lines changed), each kernel and TestAllreduceRetireDuringCapture in its own process.
set -u
R=/tmp/mutant; mkdir -p $R /tmp/mx && tar xJf .gpu/mut/mut.txz -C /tmp/mx
for tn in 'TestEvictedCloseDuringCapture$/^agmm$' 'TestEvictedCloseDuringCapture$/^matmulrs$' 'TestAllreduceRetireDuringCapture$'; do
	f=$R/$(echo "$tn" | tr -dc 'A-Za-z').txt
	(cd internal/libops && timeout 150 /tmp/mx/bin/libops-mut.test -test.count=1 -test.v -test.run "^$tn") > $f 2>&1
	echo "$tn (mutant) rc $? at $SECONDS: $(grep -E '^ *(--- )|capture|stopped|closes' $f | head -6 | cut -c1-220 | tr '\n' ' ')"
done
tar czf $OUT/mutant.tgz -C /tmp mutant
