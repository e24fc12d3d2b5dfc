//go:build cuda

package nvrtc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCompileGEMMKernels compiles the GPU GEMM pipelines' helper kernels
// (kernels/gemm/gpu) for both dtypes wherever an NVRTC library is found; no
// GPU needed. (The package that embeds them links libcuda, whose init needs
// a driver, so CI compiles them here.)
func TestCompileGEMMKernels(t *testing.T) {
	if _, _, err := Version(); err != nil {
		if os.Getenv("SYMMTUNE_NVRTC") != "" {
			t.Fatalf("SYMMTUNE_NVRTC=%s but NVRTC does not load: %v", os.Getenv("SYMMTUNE_NVRTC"), err)
		}
		t.Skipf("no NVRTC here: %v", err)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "kernels", "gemm", "gpu", "kernels", "gemm_util.cu"))
	if err != nil {
		t.Fatal(err)
	}
	// The Runner compiles it after the team barrier's source (end_barrier).
	barrier, err := os.ReadFile(filepath.Join("..", "..", "symm", "cudamem", "barrier.cuh"))
	if err != nil {
		t.Fatal(err)
	}
	// The tuner's bound (the macro's default) and a runtime's (cudamem's
	// TimeoutOptions of $SYMMTUNE_TIMEOUT_S=5).
	for _, opts := range [][]string{nil, {"-DSYMM_TIMEOUT_NS=5000000000ull"}} {
		c := Compiler{Arch: "sm_90", CacheDir: t.TempDir(), Options: opts}
		for _, bf := range []string{"0", "1"} {
			for _, pre := range []string{"", string(barrier)} {
				cubin, err := c.Compile(Source{Name: "gemm_util.cu", Text: pre + string(src), Options: []string{"-DDTYPE_BF16=" + bf}})
				if err != nil {
					t.Errorf("%v DTYPE_BF16=%s, after the barrier %v: %v", opts, bf, pre != "", err)
					continue
				}
				// The kernels built on the barrier are there after it
				// (the symbol table names them), and only then.
				for _, fn := range []string{"end_barrier", "wait_flags"} {
					if got := bytes.Contains(cubin, []byte(fn+"\x00")); got != (pre != "") {
						t.Errorf("%v DTYPE_BF16=%s, after the barrier %v: kernel %s in the cubin: %v", opts, bf, pre != "", fn, got)
					}
				}
			}
		}
	}
}
