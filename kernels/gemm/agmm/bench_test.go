package agmm

import (
	"testing"

	"github.com/symmtune/symmtune/kernels/gemm/gemmtest"
)

// BenchmarkFusedVsSequential reports the fused kernel's speedup over the
// sequential one at a few tile configs (gemmtest.BenchFusedVsSequential);
// run with -benchtime 1x.
func BenchmarkFusedVsSequential(b *testing.B) { gemmtest.BenchFusedVsSequential(b, cpuKernel) }
