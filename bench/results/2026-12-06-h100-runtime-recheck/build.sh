#!/bin/bash
# Builds fix-run.sh's bundle here (Go needed, no GPU), from the checkout's root; carry [".gpu/fix"]:
#   lib.txz: main's python/symmtune/libsymmtune.so (the fix);
#   old-lib.txz: the library of c605011, before it (as call A ran);
#   libops.txz: bin/libops-new.test (main) and bin/libops-old.test (c605011 with main's
#     internal/libops/evict_capture_cuda_test.go added: the same test on the runtime before the fix).
set -euo pipefail
root=$PWD t=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$t/wt" 2>/dev/null || true; rm -rf "$t"' EXIT
mkdir -p .gpu/fix "$t/bin"
make -s lib && tar cJf .gpu/fix/lib.txz python/symmtune/libsymmtune.so
CGO_ENABLED=1 go test -c -tags cuda -ldflags "-s -w" -o "$t/bin/libops-new.test" ./internal/libops
git worktree add -q "$t/wt" c605011
cp internal/libops/evict_capture_cuda_test.go "$t/wt/internal/libops/"
(cd "$t/wt" && make -s lib && tar cJf "$root/.gpu/fix/old-lib.txz" python/symmtune/libsymmtune.so &&
	CGO_ENABLED=1 go test -c -tags cuda -ldflags "-s -w" -o "$t/bin/libops-old.test" ./internal/libops)
tar cJf .gpu/fix/libops.txz -C "$t" bin
ls -la .gpu/fix
