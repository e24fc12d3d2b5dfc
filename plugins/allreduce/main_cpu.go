//go:build !cuda

// Command symmtune-plugin-allreduce serves the all-reduce (sum) of
// kernels/allreduce on the CPU shared-memory backend, or with -tags cuda
// (main_cuda.go) its CUDA kernel on CUDA IPC memory. The host starts one
// process per rank.
package main

import (
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/shm"
)

func main() { sdk.Serve(allreduce.CPU(), shm.Backend{}) }
