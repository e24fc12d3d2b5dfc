//go:build cuda

// Command symmtune-plugin-agmm, built with -tags cuda (main_cpu.go says more).
package main

import (
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/cudamem"
)

func main() { sdk.Serve(gpu.Kernel{Variant: gpu.VariantAGMM}, cudamem.Backend{}) }
