package gpu

import "testing"

// TestKernelVersions pins the GPU kernels' versions, which cache entries
// carry. A change to a hashed source (version.go's //go:embed list and the
// Hopper GEMM) makes every entry of the kernel stale: when that is what you
// meant, put the new value here. Moving or renaming other files must not
// change them.
func TestKernelVersions(t *testing.T) {
	// 323cccb3401b, f9484c36acaf: fail-stop (issue 54): the end barrier
	// (barrier.cuh) poisons the workspace on timeout, and the fused GEMM's
	// start gate is bounded.
	for kernel, want := range map[Variant]string{VariantAGMM: "323cccb3401b", VariantMatmulRS: "f9484c36acaf"} {
		if got := kernel.KernelVersion(); got != want {
			t.Errorf("%s kernel version %s, pinned %s", kernel, got, want)
		}
	}
}
