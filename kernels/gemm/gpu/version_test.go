package gpu

import "testing"

// TestKernelVersions pins the GPU kernels' versions, which cache entries
// carry. A change to a hashed source (version.go's //go:embed list and the
// Hopper GEMM) makes every entry of the kernel stale: when that is what you
// meant, put the new value here. Moving or renaming other files must not
// change them.
func TestKernelVersions(t *testing.T) {
	for kernel, want := range map[Variant]string{VariantAGMM: "84cf6e8fc3b7", VariantMatmulRS: "c21f05e21650"} {
		if got := kernel.KernelVersion(); got != want {
			t.Errorf("%s kernel version %s, pinned %s", kernel, got, want)
		}
	}
}
