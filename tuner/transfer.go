package tuner

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// A warm start (transfer): before a job's strategy starts, the cache's
// winners of the same kernel, kernel version, backend and dtype at the
// nearest shapes, other world sizes and, ranked lower, other hardware
// (cache.Store.Neighbours) are mapped into the job's space, and the valid
// ones are measured right after the default. The strategy sees them as
// observations and continues from them.
//
// transferSeeds is how many distinct configs seed a job: the winners of
// the three nearest entries usually hold the optimum's neighbourhood when
// the shapes are related, and each seed costs a trial.
const transferSeeds = 3

// The stopping rule of a seeded job: it ends when transferPatience trials
// in a row after its seeds have not beaten the best so far by
// transferGain. A seed from a related shape is usually within a few
// percent of the optimum, so once the strategy's spread sample (one
// config per value of each parameter, about a dozen: every algorithm and
// impl class is looked at) and a first poll around the best have brought
// nothing better, further trials rarely pay. The gain threshold matches
// the 3% a winner may be off by, and keeps timing noise (a few percent on
// a busy CPU) from counting as progress.
//
// The rule applies only when the nearest seed is within transferNear (the
// neighbour distance: |log2| of each shape ratio summed, plus world and
// hardware steps). A farther seed is a hint, not a near-answer: on 2 x
// H100 the 1024-token jobs of a TP block, seeded from 4096 x 1792 x 4096
// (distance 6), stopped after 17-24 trials 7% and 25% behind the winners
// a 150-trial cold search found (bench/results/2026-11-25-h100x2-go-runtime.md,
// run 10). Distance 2 is one 4x step of M, or 2x steps of two dimensions.
const (
	transferPatience = 16
	transferGain     = 0.03
	transferNear     = 2.0
)

// Transfer is what a job's warm start did.
type Transfer struct {
	// Seeds are the configs measured after the default, nearest first.
	Seeds []Seed
	// Patience is the stopping rule's trials (0: none applied: a job that
	// runs every valid config, an exhaustive strategy, or no seeds).
	Patience int
	// Stopped says the rule ended the exploration, after that many trials.
	Stopped int
}

// Seed is one cache entry a job started from.
type Seed struct {
	From     cache.Key
	Distance float64
	Config   space.Config // the entry's winner mapped into this job's space
}

// Line is the transfer's one-line summary: which entries seeded the job,
// and whether the stopping rule ended it.
func (t *Transfer) Line() string {
	if t == nil || len(t.Seeds) == 0 {
		return ""
	}
	var from []string
	for _, s := range t.Seeds {
		from = append(from, fmt.Sprintf("%s (distance %.1f)", s.From, s.Distance))
	}
	line := fmt.Sprintf("seeded from %d cache entr%s: %s", len(t.Seeds), plural(len(t.Seeds), "y", "ies"), strings.Join(from, "; "))
	if t.Patience == 0 && t.Seeds[0].Distance > transferNear {
		line += fmt.Sprintf("; no early stop: the nearest is farther than %.0f", transferNear)
	}
	if t.Stopped > 0 {
		line += fmt.Sprintf("; stopped after %d trials: none of the last %d beat the best by %.0f%%", t.Stopped, t.Patience, 100*transferGain)
	}
	return line
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// planTransfer finds the job's seeds in the cache: up to transferSeeds
// distinct configs valid here, from the nearest entries. A seed may be the
// default (a winner often is, at small shapes): it costs no trial then, as
// the default is measured anyway, but it still tells the job that the
// cache agrees with its baseline, and the stopping rule applies. A cache that cannot be read gives no seeds (checkCache has
// read it once already; a warm start is an optimisation, not a need).
func (ss *session) planTransfer(ctx context.Context, valid []space.Config) {
	if ss.s.NoTransfer || ss.s.Cache == nil {
		return
	}
	st, err := ss.s.Cache.Load(ctx)
	if err != nil {
		ss.s.Logger.Warn("no warm start: cache unreadable", "err", err)
		return
	}
	o := ss.out
	near := st.Neighbours(cache.NeighbourQuery{
		Kernel: ss.job.Kernel, KernelVersion: o.Desc.KernelVersion, Backend: ss.backend, Dtype: ss.job.Dtype,
		World: ss.job.World, Shape: o.Shape, Hardware: o.Hardware.ID(),
	})
	ss.transfer = &Transfer{Seeds: pickSeeds(near, valid, o.Desc.Space, o.Desc.Default, transferSeeds)}
	ss.transfer.Patience = patienceFor(ss.transfer.Seeds, stopsEarly(ss.job))
	o.Transfer = ss.transfer
	if line := ss.transfer.Line(); line != "" {
		ss.s.Logger.Info("warm start", "kernel", ss.job.Kernel, "transfer", line)
	}
}

// patienceFor is the stopping rule's patience for a job seeded by seeds
// (nearest first): none without seeds, when the job may not stop early, or
// when even the nearest seed is farther than transferNear.
func patienceFor(seeds []Seed, mayStop bool) int {
	if len(seeds) == 0 || !mayStop || seeds[0].Distance > transferNear {
		return 0
	}
	return transferPatience
}

// stopsEarly says whether the stopping rule may end job's exploration: not
// when it asks for every valid config (--exhaustive, budget_trials = 0) or
// names the exhaustive strategy. Any other budget is a cap ("at most"),
// which ending early keeps.
func stopsEarly(job Job) bool {
	return job.Strategy != strategy.Exhaustive && !(job.BudgetTrials == 0 && job.BudgetTime == 0)
}

// pickSeeds maps the winners of near (nearest first) into sp and keeps
// the first n distinct ones that are valid here.
func pickSeeds(near []cache.Neighbour, valid []space.Config, sp space.Space, def space.Config, n int) []Seed {
	ok := make(map[space.ConfigKey]bool, len(valid))
	for _, c := range valid {
		ok[c.Key()] = true
	}
	taken := map[space.ConfigKey]bool{}
	var out []Seed
	for _, nb := range near {
		if len(out) == n {
			break
		}
		c := mapConfig(nb.Entry.Config, sp, def)
		key := c.Key()
		if !ok[key] || taken[key] {
			continue
		}
		taken[key] = true
		out = append(out, Seed{From: nb.Entry.Key, Distance: nb.Distance, Config: c})
	}
	return out
}

// mapConfig carries a winner's config into space sp: each parameter of sp
// takes the winner's value when sp has it; an integer the parameter lacks
// becomes the parameter's nearest integer (by ratio for positive values,
// so 96 maps to 128 before 32); a parameter the winner lacks, or whose
// value cannot be matched, takes the default's value. Parameters sp does
// not have are dropped.
func mapConfig(from space.Config, sp space.Space, def space.Config) space.Config {
	out := make(space.Config, len(sp.Params))
	for _, p := range sp.Params {
		v, has := from[p.Name]
		switch {
		case has && p.Index(v) >= 0:
			out[p.Name] = v
		case has && !v.IsStr:
			if near, ok := nearestInt(p, v.Int); ok {
				out[p.Name] = near
			} else {
				out[p.Name] = def[p.Name]
			}
		default:
			out[p.Name] = def[p.Name]
		}
	}
	return out
}

// nearestInt is p's integer value nearest x: by |log2| ratio when both are
// positive, else by difference; ties go to the earlier value.
func nearestInt(p space.Param, x int64) (space.Value, bool) {
	best, bestD := space.Value{}, math.Inf(1)
	for _, v := range p.Values {
		if v.IsStr {
			continue
		}
		var d float64
		if x > 0 && v.Int > 0 {
			d = math.Abs(math.Log2(float64(v.Int)) - math.Log2(float64(x)))
		} else {
			d = math.Abs(float64(v.Int-x)) + 1e6 // any positive match ranks first
		}
		if d < bestD {
			best, bestD = v, d
		}
	}
	return best, !math.IsInf(bestD, 1)
}

// seeded is the job's strategy with a warm start in front: it proposes
// the default and the seeds first, then hands over to the strategy, which
// takes them as observations like any other. With a patience, it ends the
// exploration by the transfer's stopping rule.
type seeded struct {
	strategy.Strategy
	first    []space.Config
	proposed map[space.ConfigKey]bool
	patience int
	t        *Transfer
}

// withSeeds puts the job's warm start, if it has one, in front of s.
func (ss *session) withSeeds(s strategy.Strategy) strategy.Strategy {
	t := ss.transfer
	if t == nil || len(t.Seeds) == 0 {
		return s
	}
	// The default first, then each seed that is not the default.
	first := []space.Config{ss.out.Desc.Default}
	for _, sd := range t.Seeds {
		if !sd.Config.Equal(ss.out.Desc.Default) {
			first = append(first, sd.Config)
		}
	}
	return &seeded{Strategy: s, first: first, proposed: map[space.ConfigKey]bool{}, patience: t.Patience, t: t}
}

func (s *seeded) Next(history []strategy.Observation) []space.Config {
	seen := make(map[space.ConfigKey]bool, len(history))
	for _, o := range history {
		seen[o.Config.Key()] = true
	}
	var out []space.Config
	for _, c := range s.first {
		key := c.Key()
		if !seen[key] && !s.proposed[key] {
			s.proposed[key] = true
			out = append(out, c)
		}
	}
	if len(out) > 0 {
		return out
	}
	if s.patience > 0 && len(history) >= len(s.first) && stale(history, s.patience, transferGain) {
		s.t.Stopped = len(history)
		return nil
	}
	return s.Strategy.Next(history)
}

// stale reports whether the last patience observations of history brought
// no gain of at least gain (a fraction) over the best before them.
func stale(history []strategy.Observation, patience int, gain float64) bool {
	if len(history) <= patience {
		return false
	}
	best := math.Inf(1)
	last := -1 // the last observation that gained enough
	for i, o := range history {
		if !o.OK || math.IsNaN(o.ScoreUS) {
			continue
		}
		if o.ScoreUS < best*(1-gain) {
			last = i
		}
		best = min(best, o.ScoreUS)
	}
	return last >= 0 && len(history)-1-last >= patience
}
