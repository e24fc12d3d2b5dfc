// Package libpath finds the CUDA libraries symmtune loads at run time with
// dlopen (NVRTC, cuBLASLt), so that one binary works with whichever CUDA
// toolkit a machine has and nothing links against a toolkit version. It only
// lists names to try, newest major version first; the cgo bindings beside
// it (cuda/nvrtc, cuda/cublaslt) open them.
package libpath

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Dirs are the folders searched for versioned library files, besides the
// loader's own cache (the bare sonames at the end of Candidates).
var Dirs = []string{
	"/usr/local/cuda/targets/x86_64-linux/lib",
	"/usr/local/cuda/lib64",
	"/usr/local/cuda-*/targets/x86_64-linux/lib",
	"/usr/local/cuda-*/lib64",
	"/usr/lib/x86_64-linux-gnu",
}

// Candidates lists what to dlopen for library lib (e.g. "libnvrtc"): only
// the value of envVar when it is set; else every lib.so.N file in Dirs,
// newest major N first (so a machine with several toolkits uses the newest),
// then the sonames lib.so.N for N from maxMajor down to minMajor, which rely
// on ldconfig's cache, then extra names as given.
func Candidates(envVar, lib string, minMajor, maxMajor int, extra ...string) []string {
	if p := os.Getenv(envVar); p != "" {
		return []string{p}
	}
	type cand struct {
		path  string
		major int
	}
	var found []cand
	seen := map[string]bool{}
	for _, d := range Dirs {
		ms, _ := filepath.Glob(filepath.Join(d, lib+".so.*"))
		for _, m := range ms {
			majorText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(m), lib+".so."), ".")
			major, err := strconv.Atoi(majorText)
			if err != nil || seen[m] {
				continue
			}
			seen[m] = true
			found = append(found, cand{m, major})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].major > found[j].major })
	out := make([]string, 0, len(found)+maxMajor-minMajor+1+len(extra))
	for _, c := range found {
		out = append(out, c.path)
	}
	for major := maxMajor; major >= minMajor; major-- {
		out = append(out, lib+".so."+strconv.Itoa(major))
	}
	return append(out, extra...)
}
