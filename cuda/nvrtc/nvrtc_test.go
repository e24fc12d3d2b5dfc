//go:build cuda

package nvrtc

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

func TestArch(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		want         string
	}{{8, 0, "sm_80"}, {8, 9, "sm_89"}, {9, 0, "sm_90a"}, {10, 0, "sm_100a"}} {
		if got := Arch(c.major, c.minor); got != c.want {
			t.Errorf("Arch(%d,%d) = %s, want %s", c.major, c.minor, got, c.want)
		}
	}
}

func TestCandidatesHonourEnv(t *testing.T) {
	t.Setenv("SYMMTUNE_NVRTC", "/opt/x/libnvrtc.so.99")
	if c := candidates(); len(c) != 1 || c[0] != "/opt/x/libnvrtc.so.99" {
		t.Fatalf("candidates() = %v", c)
	}
}

// TestCompileKernels compiles the CUDA sources symmtune ships (the barrier
// and every all-reduce algorithm, all three dtypes, worlds 2, 4 and 8) wherever
// an NVRTC library is found; no GPU needed. It also checks that a second
// Compile is served from the disk cache.
func TestCompileKernels(t *testing.T) {
	read := repoReader(t)
	barrier := read("symm/cudamem/barrier.cuh")
	common := read("kernels/allreduce/kernels/common.cuh")
	ar := read("kernels/allreduce/kernels/allreduce.cu") + read("kernels/allreduce/kernels/algos.cu") +
		read("kernels/allreduce/kernels/lamport.cu")
	util := read("kernels/allreduce/kernels/util.cu")
	algos := kernelAlgos(t, ar)
	// sm_90 rather than sm_90a: the oldest NVRTC this supports (11.8) has no sm_90a.
	c := Compiler{Arch: "sm_90", CacheDir: t.TempDir()}
	srcs := []Source{{Name: "barrier.cu", Text: barrier}}
	// f32, bf16, f16 (as the plugin's macros name them).
	for _, dt := range [][2]string{{"0", "0"}, {"1", "0"}, {"0", "1"}} {
		for _, w := range []string{"2", "4", "8"} {
			macros := []string{"-DDTYPE_BF16=" + dt[0], "-DDTYPE_F16=" + dt[1], "-DWORLD=" + w}
			srcs = append(srcs, Source{Name: "util.cu", Text: barrier + common + util, Options: macros})
			for _, algo := range algos {
				opts := append(append([]string{}, macros...), "-DALGO="+algo, "-DTHREADS=256", "-DUNROLL=2")
				srcs = append(srcs, Source{Name: "allreduce.cu", Text: barrier + common + ar, Options: opts})
			}
		}
	}
	for i, err := range c.CompileAll(t.Context(), srcs) {
		if err != nil {
			t.Errorf("%s %v: %v", srcs[i].Name, srcs[i].Options, err)
		}
	}
	// The runtime's build: the waits' bound set by the compiler's options
	// (cudamem.TimeoutOptions: libsymmtune's 600 s), at one world and dtype.
	rt := Compiler{Arch: "sm_90", CacheDir: c.CacheDir, Options: []string{"-DSYMM_TIMEOUT_NS=600000000000ull"}}
	var rtSrcs []Source
	for _, s := range srcs {
		if slices.Contains(s.Options, "-DWORLD=2") && slices.Contains(s.Options, "-DDTYPE_BF16=1") {
			rtSrcs = append(rtSrcs, s)
		}
	}
	for i, err := range rt.CompileAll(t.Context(), rtSrcs) {
		if err != nil {
			t.Errorf("%s %v with %v: %v", rtSrcs[i].Name, rtSrcs[i].Options, rt.Options, err)
		}
	}
	if k1, _ := c.Key(rtSrcs[0]); k1 == func() string { k, _ := rt.Key(rtSrcs[0]); return k }() {
		t.Error("the compiler's options are not in the cache key")
	}
	key, err := c.Key(srcs[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, key+".cubin")); err != nil {
		t.Errorf("cubin not cached: %v", err)
	}
}

// algoCase is an ALGO value the all-reduce's sources test for.
var algoCase = regexp.MustCompile(`ALGO [!=]= (\d+)`)

// kernelAlgos are the ALGO values the all-reduce's sources name, read
// from them so that a new algorithm is compiled here without a list to
// update: they must run 1, 2, ... with no gap (a gap is a typo, or an
// algorithm whose test was lost), at least through 8, two_shot_lamport.
func kernelAlgos(t *testing.T, src string) []string {
	t.Helper()
	var nums []int
	for _, m := range algoCase.FindAllStringSubmatch(src, -1) {
		v, _ := strconv.Atoi(m[1])
		if !slices.Contains(nums, v) {
			nums = append(nums, v)
		}
	}
	slices.Sort(nums)
	var out []string
	for i, v := range nums {
		if v != i+1 {
			t.Fatalf("the all-reduce's sources test ALGO for %v: want 1, 2, ... with no gap", nums)
		}
		out = append(out, strconv.Itoa(v))
	}
	if len(out) < 8 {
		t.Fatalf("the all-reduce's sources test ALGO for %v: want 1 through 8 at least", nums)
	}
	return out
}

// TestAllreduceEntries: the push two-shots (ALGO 3, two_shot_push; 5,
// two_shot_overlap) have a second entry point, allreduce_direct, which
// the Runner launches on a caller's tensor; no other algorithm has one.
// Both PUSH_OUT values (the plugin's 2, the Runner's 0) are compiled; the
// direct entry takes its output offset as an argument, so its code must
// not depend on PUSH_OUT (the plugin's Verify checks the Runner's code):
// its registers are the same in both builds. ptxas's report of each entry
// is logged (registers and spills of the direct entry beside the in-place
// one).
func TestAllreduceEntries(t *testing.T) {
	read := repoReader(t)
	text := read("symm/cudamem/barrier.cuh") + read("kernels/allreduce/kernels/common.cuh") +
		read("kernels/allreduce/kernels/allreduce.cu") + read("kernels/allreduce/kernels/algos.cu") +
		read("kernels/allreduce/kernels/lamport.cu")
	c := Compiler{Arch: "sm_90", CacheDir: t.TempDir()}
	entry := regexp.MustCompile(`Compiling entry function '(\w+)'`)
	directRegs := regexp.MustCompile(`entry function 'allreduce_direct'[^\n]*\n(?:[^\n]*\n)*?[^\n]*Used (\d+) registers`)
	for _, algo := range kernelAlgos(t, text) {
		direct := algo == "3" || algo == "5"
		regs := map[string]string{}
		for _, pushOut := range []string{"2", "0"} {
			if pushOut == "0" && !direct {
				continue
			}
			opts := []string{"-DDTYPE_BF16=1", "-DDTYPE_F16=0", "-DWORLD=4", "-DALGO=" + algo, "-DTHREADS=512", "-DUNROLL=2", "-DPUSH_OUT=" + pushOut}
			_, log, err := c.CompileInfo(Source{Name: "allreduce.cu", Text: text, Options: opts})
			if err != nil {
				t.Errorf("ALGO %s PUSH_OUT %s: %v", algo, pushOut, err)
				continue
			}
			var got []string
			for _, m := range entry.FindAllStringSubmatch(log, -1) {
				if m[1] != "symm_barrier" {
					got = append(got, m[1])
				}
			}
			slices.Sort(got)
			want := []string{"allreduce"}
			if direct {
				want = append(want, "allreduce_direct")
			}
			if !slices.Equal(got, want) {
				t.Errorf("ALGO %s PUSH_OUT %s: entry points %v, want %v", algo, pushOut, got, want)
			}
			if direct {
				t.Logf("ALGO %s PUSH_OUT %s (bf16, 4 ranks, 512 threads, unroll 2):\n%s", algo, pushOut, log)
				if m := directRegs.FindStringSubmatch(log); m != nil {
					regs[pushOut] = m[1]
				} else {
					t.Errorf("ALGO %s PUSH_OUT %s: no register count for allreduce_direct in ptxas's report", algo, pushOut)
				}
			}
		}
		if direct && regs["0"] != regs["2"] {
			t.Errorf("ALGO %s: allreduce_direct uses %s registers with PUSH_OUT 0, %s with 2: its code depends on PUSH_OUT", algo, regs["0"], regs["2"])
		}
	}
}

// repoReader skips t where no NVRTC loads (make cuda-test, CI, points
// SYMMTUNE_NVRTC at the fetched library: there a missing NVRTC fails t
// instead) and returns a reader of the repository's files by path.
func repoReader(t *testing.T) func(path string) string {
	t.Helper()
	if _, _, err := Version(); err != nil {
		if os.Getenv("SYMMTUNE_NVRTC") != "" {
			t.Fatalf("SYMMTUNE_NVRTC=%s but NVRTC does not load: %v", os.Getenv("SYMMTUNE_NVRTC"), err)
		}
		t.Skipf("no NVRTC here: %v", err)
	}
	return func(p string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
}
