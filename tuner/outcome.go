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
	// Kept is the cache's entry for the slot after Entry was stored:
	// Entry, or a better one that was already there.
	Kept *cache.Entry
	// SetAside is what storing Entry moved out of the cache's way
	// (damaged entries, a config outside the plugin's space) and where
	// it was kept.
	SetAside   []cache.Damage
	SetAsideTo string
	Elapsed    time.Duration
	// Interrupted is set when the context ended the search early; Entry is
	// then nil and the log holds what was measured.
	Interrupted bool
	// Startup is how long the first group took to start.
	Startup Startup
	// Time is where Elapsed went, phase by phase.
	Time TimeSplit
	// Budget is the budget the exploration ran under, and why.
	Budget Budget
	// Transfer is the job's warm start: the cache entries it started from
	// (nil or no seeds: none).
	Transfer *Transfer
}

// Startup is a group's start: each rank process's start-up (exec to
// go-plugin's handshake, in rank order) and the setup and connect of all
// ranks together (allocating and mapping symmetric memory; a GPU plugin
// may create its context and process group here).
type Startup struct {
	Ranks []time.Duration
	Setup time.Duration
}

// Speedup of r over the default config measured the same way (both
// re-measured finalists, or both first-pass trials); 0 when unknown.
func (o *Outcome) Speedup(r Result) float64 {
	if r.Status != StatusOK {
		return 0
	}
	for _, d := range o.Results {
		if d.Config.Equal(o.Desc.Default) && d.Refined == r.Refined && d.Status == StatusOK {
			return d.Score() / r.Score()
		}
	}
	return 0
}

// Remeasured returns the finalists' re-measurements (the round after the
// search, with more iterations): those that ran correctly fastest first,
// then those that failed it. The winner leads unless the default kept its
// place (Winner).
func (o *Outcome) Remeasured() []Result {
	var ok, failed []Result
	for _, r := range o.Results {
		switch {
		case !r.Refined:
		case r.Status == StatusOK:
			ok = append(ok, r)
		default:
			failed = append(failed, r)
		}
	}
	byScore(ok)
	return append(ok, failed...)
}

// FirstPass returns up to n configs that ran correctly in the search but
// were not re-measured, fastest first by their first-pass score. They are
// kept apart from Remeasured because their iteration counts differ.
func (o *Outcome) FirstPass(n int) []Result {
	if n <= 0 {
		return nil
	}
	remeasured := map[space.ConfigKey]bool{}
	for _, r := range o.Results {
		if r.Refined {
			remeasured[r.Config.Key()] = true
		}
	}
	var out []Result
	for _, r := range o.Results {
		if r.Status == StatusOK && !r.Refined && !remeasured[r.Config.Key()] {
			out = append(out, r)
		}
	}
	byScore(out)
	return out[:min(n, len(out))]
}

// FirstPassOf returns c's measurement in the search (before any
// re-measurement).
func (o *Outcome) FirstPassOf(c space.Config) (Result, bool) {
	for _, r := range o.Results {
		if !r.Refined && r.Config.Equal(c) {
			return r, true
		}
	}
	return Result{}, false
}

// byScore sorts results fastest first; ties by config, for a stable table.
func byScore(rs []Result) {
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Score() != rs[j].Score() {
			return rs[i].Score() < rs[j].Score()
		}
		return rs[i].Config.String() < rs[j].Config.String()
	})
}
