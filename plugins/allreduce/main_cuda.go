//go:build cuda

package main

import (
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/cudamem"
)

func main() { sdk.Serve(cudaKernel{}, cudamem.Backend{}) }
