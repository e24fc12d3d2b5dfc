//go:build cuda

package libops

import (
	"errors"

	"github.com/symmtune/symmtune/cuda/cu"
	"github.com/symmtune/symmtune/kernels/gemm/gpu"
)

// ptrsOf is one call's operands as the Runner takes them.
//
// PENDING wt-run (issue 30): gpu.Ptrs gains ScaleA and ScaleB
// (docs/fp8.md); once that is on main this sets them and the error goes.
// Until then no FP8 runner opens (ParseProblem refuses e4m3), so a scaled
// call cannot reach here.
func ptrsOf(p gemmPtrs) (gpu.Ptrs, error) {
	if p.scaleA != 0 || p.scaleB != 0 {
		return gpu.Ptrs{}, errors.New("this build's kernels/gemm/gpu takes no scales (gpu.Ptrs has no ScaleA, ScaleB)")
	}
	return gpu.Ptrs{A: cu.DevicePtr(p.a), B: cu.DevicePtr(p.b), C: cu.DevicePtr(p.c), Extra: cu.DevicePtr(p.extra)}, nil
}
