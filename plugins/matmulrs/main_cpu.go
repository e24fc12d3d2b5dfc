//go:build !cuda

// Command symmtune-plugin-matmulrs serves the fused matmul + reduce-scatter of
// kernels/gemm/matmulrs on the CPU shared-memory backend, or with -tags cuda
// (main_cuda.go) kernels/gemm/gpu's on CUDA IPC memory. The host starts one
// process per rank.
package main

import (
	"github.com/symmtune/symmtune/kernels/gemm/matmulrs"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/shm"
)

func main() { sdk.Serve(matmulrs.CPU(), shm.Backend{}) }
