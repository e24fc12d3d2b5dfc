//go:build !cuda

// Command symmtune-plugin-allreduce is symmtune's all-reduce (sum) plugin:
// kernels/allreduce's kernel on the CPU shared-memory backend, or with
// -tags cuda (main_cuda.go) its CUDA kernel (bin/cuda/). The host starts
// one process per rank.
package main

import (
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/shm"
)

func main() { sdk.Serve(allreduce.CPU(), shm.Backend{}) }
