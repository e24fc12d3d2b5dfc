//go:build !cuda

package main

import (
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/symm/shm"
)

func main() { sdk.Serve(cpuKernel, shm.Backend{}) }
