//go:build !cuda

// Command symmtune-plugin-agmm serves the fused all-gather + matmul of
// kernels/gemm/agmm on the CPU shared-memory backend, or with -tags cuda
// (main_cuda.go) kernels/gemm/gpu's on CUDA IPC memory. The host starts one
// process per rank.
package main

import (
	"github.com/symmtune/symmtune/kernels/gemm/agmm"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/shm"
)

func main() { sdk.Serve(agmm.CPU(), shm.Backend{}) }
