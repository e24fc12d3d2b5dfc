package allreduce

import "testing"

// TestKernelVersions pins the kernel versions cache entries carry. A change
// to a hashed source (cpu.go; the barrier and kernels/*.cu* for CUDA) makes
// every entry of that kernel stale: when that is what you meant, put the
// new value here. Moving or renaming the files must not change it.
func TestKernelVersions(t *testing.T) {
	for _, c := range []struct{ name, got, want string }{
		{"cpu", CPU().Describe().KernelVersion, "a450f393096d"},
		// 72b32feb72e1: the push two-shots (ALGO 3, 5) gained a second entry,
		// allreduce_direct, that reads and writes a caller's tensor (issue
		// 45), its output offset an argument; the in-place entries' SASS is
		// main's (NVRTC 11.8, sm_90, ALGO 3 and 5, both PUSH_OUT, bf16 and
		// f32: equal but for label numbers; lamport.cu's tensor helpers
		// moved to common.cuh on the way). Every CUDA entry tuned before is
		// stale.
		{"cuda (KernelVersion)", KernelVersion(), "72b32feb72e1"},
	} {
		if c.got != c.want {
			t.Errorf("%s kernel version %s, pinned %s", c.name, c.got, c.want)
		}
	}
}
