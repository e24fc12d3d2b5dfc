package gpu

import "github.com/symmtune/symmtune/space"

// check is what the plugins' Validate runs for each config the host asks
// about (Kernel.checked, cuda build tag): the problem and the config
// parsed, then Validate. Untagged, so that the whole space's listing can
// be measured (BenchmarkListSpace) and tested (TestListingUnchanged)
// without a GPU. Not in validate.go: the kernel version hashes that file
// (version.go), and this is not what runs.
func (v Variant) check(c space.Config, p space.Problem, world int) (Config, Problem, error) {
	prob, err := ParseProblem(p, world)
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
