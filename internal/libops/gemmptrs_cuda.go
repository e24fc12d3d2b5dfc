//go:build cuda

package libops

import (
	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
)

// ptrsOf is one call's operands as the Runner takes them (the scales zero
// but for FP8: gemmEnqueue lets only an FP8 runner's calls carry them).
func ptrsOf(p gemmPtrs) gpu.Ptrs {
	return gpu.Ptrs{A: cu.DevicePtr(p.a), B: cu.DevicePtr(p.b), C: cu.DevicePtr(p.c), Extra: cu.DevicePtr(p.extra),
		ScaleA: cu.DevicePtr(p.scaleA), ScaleB: cu.DevicePtr(p.scaleB)}
}
