package hopper

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cppShim stands in for what NVRTC provides and a host C++ compiler does
// not: the CUDA keywords, the built-in variables and the few device
// functions the kernel calls. Inline PTX is left as it is: a syntax-only
// pass does not assemble it.
const cppShim = `#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(a, b)
#define __grid_constant__
#define __shared__
#define __cluster_dims__(a, b, c)
#define __align__(n) __attribute__((aligned(n)))
struct dim3s { unsigned x, y, z; };
extern dim3s threadIdx, blockIdx, gridDim, blockDim;
inline void __syncwarp(unsigned = 0xffffffff) {}
inline void __syncthreads() {}
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline int __ffs(unsigned x) { return __builtin_ffs(x); }
`

// TestKernelSyntaxOnCPU parses hopper_gemm.cu's source, as NVRTC gets it,
// with the host C++ compiler for tiles of each kind (cooperative, ping-pong,
// clustered, split-K, stream-K; bf16, FP8 with row scales, the
// reduce-scatter's epilogue with and without the peers' buffer): a typo
// or a name used before it exists fails here, on every machine with a C++
// compiler, instead of on a GPU machine's first compile. It checks C++
// syntax and names only, not PTX, registers or NVRTC's own limits
// (TestCompileAllTiles on a GPU machine does those).
func TestKernelSyntaxOnCPU(t *testing.T) {
	cxx, err := exec.LookPath("c++")
	if err != nil {
		if cxx, err = exec.LookPath("g++"); err != nil {
			t.Skip("no C++ compiler (c++, g++) here")
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "hopper_gemm.cpp")
	write := func(src string) {
		if err := os.WriteFile(file, []byte(cppShim+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	parse := func(opts []string) ([]byte, error) {
		args := append([]string{"-std=c++17", "-fsyntax-only", "-w"}, opts...)
		return exec.Command(cxx, append(args, file)...).CombinedOutput()
	}
	bf16, row := Format{Elem: ElemBF16}, Format{Elem: ElemE4M3, RowScales: true}
	variants := []struct {
		tile string
		f    Format
		more []string
	}{
		{"128x256:s4:c2:g8", bf16, nil},
		{"128x128:s6:c2:g4:pp", row, nil},
		{"128x256:s4:c2:g8:cl2", bf16, []string{EpilogueOption}},
		{"128x256:s4:c2:g8", row, []string{EpilogueOption, "-DRS_SMEM_PEERS=1"}},
		{"64x128:s6:c2:g8:pp:sk4", row, nil},
		{"128x256:s4:c2:g8:st", bf16, nil},
	}
	write(Source)
	for _, v := range variants {
		tl, err := ParseTile(v.tile)
		if err != nil {
			t.Fatal(err)
		}
		opts := append(tl.Options(v.f), v.more...)
		if out, err := parse(opts); err != nil {
			t.Errorf("%s %v %v: %v\n%s", v.tile, v.f, v.more, err, out)
		}
	}
	// The check can fail: a statement that is not C++ in the kernel's body.
	write(strings.Replace(Source, "grid_wait();", "grid_wait() +;", 1))
	tl, _ := ParseTile(variants[0].tile)
	if _, err := parse(tl.Options(bf16)); err == nil {
		t.Error("a broken kernel source parsed")
	}
}
