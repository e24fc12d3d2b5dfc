#!/bin/sh
# gpu-bundle.sh: builds what a GPU machine without Go needs into the
# git-ignored .gpu/: bins.tgz (stripped bin/symmtune, the CUDA plugins
# under bin/cuda/, bin/gemmalone, and python/symmtune/libsymmtune.so built
# with -tags cuda, which symmtune.torch loads to run the GEMM kernels; about
# 50 MB) and a copy of the shared peer script. Carry .gpu to the machine and
# unpack with `tar xzf .gpu/bins.tgz` in the checkout.
set -eu
make -s cuda-headers
CUDA_ENV_INC=$(pwd)/.cuda/root/usr/include
CUDA_ENV_LIB=$(cat .cuda/libdir)
rm -rf .gpu/bin .gpu/python && mkdir -p .gpu/bin/cuda .gpu/python/symmtune
# The library with the GEMM runtime (-tags cuda): it links libcuda, so it
# goes to the GPU machine only (make lib stays tag-free for CPU machines).
CGO_ENABLED=1 CGO_CFLAGS="-I$CUDA_ENV_INC" CGO_LDFLAGS="-L$CUDA_ENV_LIB" \
	go build -tags cuda -buildmode=c-shared -trimpath -ldflags "-s -w" -o .gpu/python/symmtune/libsymmtune.so ./cmd/libsymmtune
rm -f .gpu/python/symmtune/libsymmtune.h
go build -ldflags "-s -w" -o .gpu/bin/symmtune ./cmd/symmtune
for p in allreduce agmm matmulrs; do
	CGO_ENABLED=1 CGO_CFLAGS="-I$CUDA_ENV_INC" CGO_LDFLAGS="-L$CUDA_ENV_LIB" \
		go build -tags cuda -ldflags "-s -w" -o .gpu/bin/cuda/symmtune-plugin-$p ./plugins/$p
done
CGO_ENABLED=1 CGO_CFLAGS="-I$CUDA_ENV_INC" CGO_LDFLAGS="-L$CUDA_ENV_LIB" \
	go build -tags cuda -ldflags "-s -w" -o .gpu/bin/gemmalone ./bench/gemmalone
tar czf .gpu/bins.tgz -C .gpu bin python && rm -rf .gpu/bin .gpu/python
[ -f ../shared/bench/peer_baselines.py ] && cp ../shared/bench/peer_baselines.py .gpu/
ls -la .gpu
