package allreduce

import (
	"strings"
	"testing"
)

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
		// e2ec62292b7e: fail-stop (issue 54): the barrier and the Lamport
		// waits poison the workspace on timeout and fail at once on a
		// poisoned one, and the kernels skip their work after a failed
		// wait; a healthy wait adds one load of the flag, in flight with
		// its first poll. Every CUDA entry tuned before is stale.
		// 374975e9002a: the Lamport waits make no call and load no flag
		// up front (the decode all-reduces had run 3-9% slower than before
		// fail-stop, 1 x H200, 2026-12-02): one_shot_lamport spreads the
		// poison inline in its wait's slow path (lp_wait_spread),
		// two_shot_lamport marks the thread dead and spreads it at the
		// kernel's end (lp_wait, lp_fail). Every CUDA entry tuned before
		// is stale.
		{"cuda (KernelVersion)", KernelVersion(), "374975e9002a"},
	} {
		if c.got != c.want {
			t.Errorf("%s kernel version %s, pinned %s", c.name, c.got, c.want)
		}
	}
}

// TestAllreduceFiles: Allreduce is allreduce.cu, algos.cu and lamport.cu
// in that order, and every #if, #ifdef and #ifndef of each file closes in
// that file, so that each reads on its own (algos.cu holds the whole ALGO
// 1 to 6 chain).
func TestAllreduceFiles(t *testing.T) {
	files := []string{"allreduce.cu", "algos.cu", "lamport.cu"}
	var all string
	for _, f := range files {
		text := kernelText(f)
		all += text
		depth := 0
		for i, line := range strings.Split(text, "\n") {
			switch d := strings.Fields(line + " ."); d[0] {
			case "#if", "#ifdef", "#ifndef":
				depth++
			case "#elif", "#else":
				if depth == 0 {
					t.Errorf("%s:%d: %s outside an #if of this file", f, i+1, d[0])
				}
			case "#endif":
				if depth--; depth < 0 {
					t.Errorf("%s:%d: #endif of no #if of this file", f, i+1)
					depth = 0
				}
			}
		}
		if depth != 0 {
			t.Errorf("%s: %d #if left open at its end", f, depth)
		}
	}
	if all != Allreduce {
		t.Errorf("Allreduce is not %v concatenated", files)
	}
	if !strings.HasPrefix(kernelText("algos.cu"), "#if ALGO == 1\n") {
		t.Error("algos.cu does not start with the ALGO chain's #if ALGO == 1")
	}
}
