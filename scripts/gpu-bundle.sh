#!/bin/sh
# gpu-bundle.sh: builds what a GPU machine without Go needs into the
# git-ignored .gpu/: bins.tgz (stripped bin/symmtune, the CUDA plugins
# under bin/cuda/, bin/gemmalone, the GPU tests of the driver binding
# bin/cu.test and of the cuBLASLt binding bin/cublaslt.test, the
# fail-stop tests bin/cudamem.test and bin/libops.test, and
# python/symmtune/libsymmtune.so, which symmtune.torch loads for the
# rules and the GEMM runtime; about 50 MB) and a copy of the shared peer
# script. Carry .gpu to the machine and unpack with `tar xzf .gpu/bins.tgz`
# in the checkout. The CUDA builds need cgo only: no CUDA headers or
# libraries (every CUDA library is loaded at run time).
set -eu
rm -rf .gpu/bin .gpu/python && mkdir -p .gpu/bin/cuda .gpu/python/symmtune
make -s lib
cp python/symmtune/libsymmtune.so .gpu/python/symmtune/
go build -ldflags "-s -w" -o .gpu/bin/symmtune ./cmd/symmtune
for p in allreduce agmm matmulrs; do
	CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o .gpu/bin/cuda/symmtune-plugin-$p ./plugins/$p
done
CGO_ENABLED=1 go build -tags cuda -ldflags "-s -w" -o .gpu/bin/gemmalone ./bench/gemmalone
# The driver binding's GPU test (bin/cu.test -test.v: allocates, copies,
# launches, captures a graph).
CGO_ENABLED=1 go test -c -tags cuda,gpu -ldflags "-s -w" -o .gpu/bin/cu.test ./cuda/cu
# The cuBLASLt binding's GPU test (bin/cublaslt.test -test.v: bf16 and FP8
# e4m3 products, tensor and row scales, against a float64 reference; logs
# the combinations cuBLASLt refuses).
CGO_ENABLED=1 go test -c -tags cuda,gpu -ldflags "-s -w" -o .gpu/bin/cublaslt.test ./cuda/cublaslt
# The fail-stop GPU tests (issue 54): a world-2 group on one GPU where rank
# 1 never arrives (bin/cudamem.test -test.run 'FailStop|Fresh' -test.v:
# the barrier; bin/libops.test -test.run FailStop -test.v: the runtime's
# all-reduces, barrier and Lamport ones). They skip without a GPU.
CGO_ENABLED=1 go test -c -tags cuda -ldflags "-s -w" -o .gpu/bin/cudamem.test ./symm/cudamem
CGO_ENABLED=1 go test -c -tags cuda -ldflags "-s -w" -o .gpu/bin/libops.test ./internal/libops
tar czf .gpu/bins.tgz -C .gpu bin python && rm -rf .gpu/bin .gpu/python
[ -f ../shared/bench/peer_baselines.py ] && cp ../shared/bench/peer_baselines.py .gpu/
ls -la .gpu
