package tuner

import (
	"sort"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/hardware"
	"github.com/symmtune/symmtune/sdk"
	"github.com/symmtune/symmtune/space"
)

// Outcome is what one search found.
type Outcome struct {
	Job        Job
	Backend    string
	Desc       sdk.Description
	Hardware   hardware.Fingerprint
	Shape      space.Shape
	SpaceSize  int
	ValidCount int
	// Results holds every trial in order, resumed ones included, and the
	// re-measurements of the finalists (Refined).
	Results []Result
	Counts  map[Status]int
	Best    *Result // the winner's refined measurement; nil when nothing ran correctly
	Default *Result // the default config's refined (else first) measurement
	Entry   *cache.Entry
	Elapsed time.Duration
	// Interrupted is set when the context ended the search early; Entry is
	// then nil and the log holds what was measured.
	Interrupted bool
}

// Speedup of r over the default config measured the same way (both
// re-measured finalists, or both first-pass trials); 0 when unknown.
func (o *Outcome) Speedup(r Result) float64 {
	if r.Status != StatusOK {
		return 0
	}
	def := o.Desc.Default.String()
	for _, d := range o.Results {
		if d.Config.String() == def && d.Refined == r.Refined && d.Status == StatusOK {
			return d.Score() / r.Score()
		}
	}
	return 0
}

// Top returns up to n configs best first: the re-measured finalists (the
// winner first), then the other configs by their first-pass score. The two
// groups are not mixed because their iteration counts differ.
func (o *Outcome) Top(n int) []Result {
	var refined, first []Result
	seen := map[string]bool{}
	for _, r := range o.Results {
		if r.Status == StatusOK && r.Refined {
			refined = append(refined, r)
			seen[r.Config.String()] = true
		}
	}
	for _, r := range o.Results {
		if r.Status == StatusOK && !r.Refined && !seen[r.Config.String()] {
			first = append(first, r)
		}
	}
	byScore := func(rs []Result) {
		sort.SliceStable(rs, func(i, j int) bool {
			if rs[i].Score() != rs[j].Score() {
				return rs[i].Score() < rs[j].Score()
			}
			return rs[i].Config.String() < rs[j].Config.String()
		})
	}
	byScore(refined)
	byScore(first)
	out := append(refined, first...)
	if len(out) > n {
		out = out[:n]
	}
	return out
}
