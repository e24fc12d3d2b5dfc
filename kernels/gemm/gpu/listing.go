package gpu

import (
	"sync/atomic"

	"github.com/symmtune/symmtune/space"
)

// check is what the plugins' Validate runs for each config the host asks
// about (Kernel.checked, cuda build tag): the problem and the config
// parsed, then Validate. Untagged, so that the whole space's listing can
// be measured (BenchmarkListSpace) and tested (TestListingUnchanged)
// without a GPU. Not in validate.go: the kernel version hashes that file
// (version.go), and this is not what runs.
func (v Variant) check(c space.Config, p space.Problem, world int) (Config, Problem, error) {
	prob, err := parseProblem(p, world)
	if err != nil {
		return Config{}, Problem{}, err
	}
	cfg, err := v.ParseConfig(c)
	if err != nil {
		return Config{}, Problem{}, err
	}
	// The reason alone: the host names the config it asked about, and a
	// search asks about every config of the space (1.3 million for a
	// world-1 matmulrs), where formatting each rejected one was half of
	// the validation's time.
	if err := v.Validate(cfg, prob); err != nil {
		return Config{}, Problem{}, err
	}
	return cfg, prob, nil
}

// parsedProblem is ParseProblem's answer for a shape of m, n and k alone.
type parsedProblem struct {
	dtype   string
	m, n, k int64
	world   int
	prob    Problem
	err     error
}

// lastProblem is the problem check parsed last. The host lists a space by
// asking about each of its configs (over a million per plugin) on one
// problem, and parsing the problem again for each (gemm.ParseDims
// allocates) was a tenth of the listing's time.
var lastProblem atomic.Pointer[parsedProblem]

// parseProblem is ParseProblem(p, world), the last answer again where p
// and world are the last ones'. ParseProblem reads only the dtype, the
// world and a shape's m, n and k (a shape of other dimensions is parsed
// anew), so the answer, its reason's text included, is the same.
func parseProblem(p space.Problem, world int) (Problem, error) {
	m, okM := p.Shape["m"]
	n, okN := p.Shape["n"]
	k, okK := p.Shape["k"]
	if !okM || !okN || !okK || len(p.Shape) != 3 {
		return ParseProblem(p, world)
	}
	last := lastProblem.Load()
	if last != nil && last.m == m && last.n == n && last.k == k && last.world == world && last.dtype == p.Dtype {
		return last.prob, last.err
	}
	prob, err := ParseProblem(p, world)
	lastProblem.Store(&parsedProblem{dtype: p.Dtype, m: m, n: n, k: k, world: world, prob: prob, err: err})
	return prob, err
}
