//go:build cuda

// Command symmtune-plugin-allreduce, built with -tags cuda (main_cpu.go says more).
package main

import (
	"github.com/symmtune/symmtune/kernels/allreduce"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/cudamem"
)

func main() { sdk.Serve(allreduce.CUDA(), cudamem.Backend{}) }
