package agmm

import "testing"

// TestKernelVersion pins the CPU kernel's version, which cache entries
// carry. A change to a hashed source (cpu.go, kernels/gemm's sources) makes
// every entry of the kernel stale: when that is what you meant, put the new
// value here. Moving or renaming the files must not change it.
func TestKernelVersion(t *testing.T) {
	if got, want := CPU().Describe().KernelVersion, "6ff735a6f0ae"; got != want {
		t.Errorf("kernel version %s, pinned %s", got, want)
	}
}
