package tuner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// measure runs (or takes from the resume log) one trial, logs it, and
// restarts the group when the trial left it unusable. resumed says the
// result came from the resume log, not a trial. A logged trial timed
// otherwise than the job asks (Job.TrialTiming) is measured again: scores
// of two timings are not comparable (loaded ones ran 13% longer on 1 x
// H200).
func (ss *session) measure(ctx context.Context, c space.Config, iters int, refined bool) (res Result, resumed bool, err error) {
	if !refined {
		if r, ok := ss.s.Done.take(ss.jobKey(), c); ok && r.Timing == ss.job.TrialTiming {
			ss.out.Results = append(ss.out.Results, r)
			return r, true, nil
		}
	}
	res, restart, err := ss.trial(ctx, c, iters, ss.job.TrialTiming)
	if err != nil {
		return Result{}, false, err
	}
	res.Refined = refined
	return res, false, ss.record(ctx, res, restart)
}

// trial runs c once on the group, its bench timed as timing asks (""
// the plugin's own; sdk.Timing), and returns its result, not yet
// recorded, and whether the group must restart after it; the error is
// only the context's (a trial cut short by an interrupt is not a result).
// With Job.Warm and no call time known yet, c first runs with the plain
// warm-up to measure one (that run is not a result).
func (ss *session) trial(ctx context.Context, c space.Config, iters int, timing string) (Result, bool, error) {
	if ss.job.Warm > 0 && ss.callUS == 0 {
		res, restart, err := ss.run(ctx, c, ss.job.Warmup, iters, timing)
		if err != nil || res.Status != StatusOK || restart {
			return res, restart, err
		}
	}
	return ss.run(ctx, c, warmIters(ss.job.Warm, ss.callUS, ss.job.Warmup), iters, timing)
}

// maxWarmIters bounds a time-based warm-up, so that a first config
// measured at an implausibly short call time cannot ask for billions.
const maxWarmIters = 1_000_000

// warmIters is the warm-up count that runs calls of callUS µs for about
// warm, and at least least.
func warmIters(warm time.Duration, callUS float64, least int) int {
	if warm <= 0 || callUS <= 0 {
		return least
	}
	n := math.Ceil(float64(warm.Microseconds()) / callUS)
	return max(least, int(min(n, maxWarmIters)))
}

// run is one measurement of c with the given warm-up, as trial returns
// it; a successful one updates the deadlines' references and, the first
// time, the call time Job.Warm is counted in.
func (ss *session) run(ctx context.Context, c space.Config, warmup, iters int, timing string) (Result, bool, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, false, err
	}
	t := trialSpec{Config: c, Warmup: warmup, Iters: iters, Timing: timing, Timeouts: ss.job.Timeouts}
	t.Timeouts.Verify = ss.deadline("verify", t.Timeouts.Verify)
	t.BenchDeadline = benchDeadline(t.Timeouts.Bench, ss.iterUS, t.Warmup+t.Iters)
	res, restart, took := ss.grp.runTrial(ctx, t)
	ss.out.Time.addTrial(took)
	if ctx.Err() != nil {
		return Result{}, false, ctx.Err()
	}
	res.PrepareMS, res.VerifyMS, res.BenchMS = ms(took.Prepare), ms(took.Verify), ms(took.Bench)
	res.Timing = timing
	if res.Status == StatusOK {
		// Verify and bench durations, for deadlines scaled to the work.
		ss.slowest["verify"] = max(ss.slowest["verify"], took.Verify)
		perIter := float64(took.Bench.Microseconds()) / float64(t.Warmup+t.Iters)
		ss.iterUS = max(ss.iterUS, perIter)
		// The plugin's own timing of a call, not the bench RPC's wall time
		// per iteration, which also holds its set-up (a graph capture, say).
		if ss.callUS == 0 && res.ScoreUS != nil {
			ss.callUS = *res.ScoreUS
		}
	}
	return res, restart, nil
}

// record keeps and logs res, then restarts the group if its trial left it
// unusable.
func (ss *session) record(ctx context.Context, res Result, restart bool) error {
	ss.stamp(&res)
	ss.out.Results = append(ss.out.Results, res)
	if ss.s.Log != nil {
		if err := ss.s.Log.Write(res); err != nil {
			return err
		}
	}
	if res.Status != StatusOK {
		ss.s.Logger.Debug("trial did not pass", "config", res.Config.String(), "status", res.Status, "err", res.Error)
	}
	if restart {
		ss.s.Logger.Info("restarting ranks", "after", res.Status, "config", res.Config.String())
		began := time.Now()
		err := ss.restartRetrying(ctx)
		ss.out.Time.Restart += time.Since(began)
		if err != nil {
			return fmt.Errorf("restart ranks after %s of %s: %w", res.Status, res.Config, err)
		}
	}
	return nil
}

// stamp fills in what every logged result carries about its job.
func (ss *session) stamp(r *Result) {
	r.Kernel, r.Backend, r.World, r.Dtype = ss.job.Kernel, ss.backend, ss.job.World, ss.job.Dtype
	r.Shape = ss.out.Shape.Format(ss.out.Desc.Dims...)
	r.Strategy, r.ValidConfigs, r.Hardware = ss.strategy, ss.out.ValidCount, ss.out.Hardware.ID()
	r.Default = r.Config.Equal(ss.out.Desc.Default)
}

func (ss *session) jobKey() string {
	return resumeKey(ss.job.Kernel, ss.backend, ss.job.World, ss.job.Dtype, ss.out.Shape.Format(ss.out.Desc.Dims...))
}

// FinalistsWithin is how close to the best first-pass score a config must
// come to be re-measured as a finalist (besides the default, re-measured
// as the baseline): within 25%.
const FinalistsWithin = 1.25

// RefineRounds is how many interleaved rounds the finalists are
// re-measured in. A GPU's clock drifts by more than the finalists differ
// (15% within seconds under a power cap:
// bench/results/2026-11-23-h200x2-paired.md), so finalists re-measured one
// after the other would be ranked by when they ran. In rounds, each round
// measures every finalist once, in an order rotated by one per round, so
// each meets the early, middle and late clocks alike.
const RefineRounds = 3

// refine re-measures the finalists and the default with more iterations
// (successive halving's last rung), timed as Job.RefineTiming asks (else
// as Job.TrialTiming): the
// first pass used few iterations, so its ranking near the top is
// noise-prone. The iterations are split over
// RefineRounds interleaved rounds; a finalist's re-measurement is its
// median round (roundsResult), logged once after the last round. A
// finalist that fails a round is logged with that round's result and
// dropped. The winner is Winner's pick of the re-measurements.
func (ss *session) refine(ctx context.Context) error {
	var obs []strategy.Observation
	for _, r := range ss.out.Results {
		obs = append(obs, strategy.Observation{Config: r.Config, ScoreUS: r.Score(), OK: r.Status == StatusOK})
	}
	finalists := strategy.Finalists(obs, ss.job.Finalists, FinalistsWithin)
	if len(finalists) == 0 {
		return nil
	}
	def := ss.out.Desc.Default.Key()
	defaultOK := false
	for _, r := range ss.out.Results {
		if r.Config.Key() == def && r.Status == StatusOK {
			defaultOK = true
			d := r
			ss.out.Default = &d
		}
	}
	if defaultOK && !containsConfig(finalists, def) {
		finalists = append(finalists, ss.out.Desc.Default)
	}
	iters := ss.job.Iters * ss.job.RefineFactor
	timing := ss.job.RefineTiming
	if timing == "" {
		timing = ss.job.TrialTiming
	}
	perRound := (iters + RefineRounds - 1) / RefineRounds
	rounds := make(map[space.ConfigKey][]Result, len(finalists))
	dropped := map[space.ConfigKey]bool{}
	for round := 0; round < RefineRounds; round++ {
		for _, c := range rotated(finalists, round) {
			key := c.Key()
			if dropped[key] {
				continue
			}
			res, restart, err := ss.trial(ctx, c, perRound, timing)
			if err != nil {
				return err
			}
			if res.Status != StatusOK {
				ss.s.Logger.Warn("finalist failed its re-measurement; dropped", "config", key, "status", res.Status, "round", round+1)
				dropped[key] = true
				res.Refined = true
				if err := ss.record(ctx, res, restart); err != nil {
					return err
				}
				continue
			}
			rounds[key] = append(rounds[key], res)
		}
	}
	var remeasured []Result
	for _, c := range finalists {
		key := c.Key()
		if dropped[key] {
			continue
		}
		res := roundsResult(rounds[key])
		if err := ss.record(ctx, res, false); err != nil {
			return err
		}
		if key == def {
			r := res
			ss.out.Default = &r
		}
		remeasured = append(remeasured, res)
	}
	if w, ok := Winner(remeasured, ss.out.Desc.Default); ok {
		ss.out.Best = &w
	}
	return nil
}

// rotated returns cs starting at index by (mod len(cs)).
func rotated(cs []space.Config, by int) []space.Config {
	by %= len(cs)
	return append(append([]space.Config{}, cs[by:]...), cs[:by]...)
}

// roundsResult is one finalist's re-measurement from its rounds (all ok):
// the round with the median score (the lower middle for an even count) as
// it was measured, with the iterations, elapsed and phase times of all
// rounds, the fastest iteration of any, each rank's median of its round
// medians, and the worst verification error.
func roundsResult(rs []Result) Result {
	byRound := append([]Result{}, rs...)
	sort.SliceStable(byRound, func(i, j int) bool { return byRound[i].Score() < byRound[j].Score() })
	out := byRound[(len(byRound)-1)/2]
	out.Refined, out.Rounds = true, len(rs)
	out.Iters, out.ElapsedMS = 0, 0
	out.PrepareMS, out.VerifyMS, out.BenchMS = 0, 0, 0
	out.ScoreUS, out.P90US, out.RelErr = clonePtr(out.ScoreUS), clonePtr(out.P90US), clonePtr(out.RelErr)
	var minUS *float64
	ranks := make([][]float64, len(out.RanksUS))
	for _, r := range rs {
		out.Iters += r.Iters
		out.ElapsedMS += r.ElapsedMS
		out.PrepareMS += r.PrepareMS
		out.VerifyMS += r.VerifyMS
		out.BenchMS += r.BenchMS
		if r.MinUS != nil && (minUS == nil || *r.MinUS < *minUS) {
			minUS = clonePtr(r.MinUS)
		}
		if r.RelErr != nil && (out.RelErr == nil || *r.RelErr > *out.RelErr) {
			out.RelErr = clonePtr(r.RelErr)
		}
		for q := range ranks {
			if q < len(r.RanksUS) {
				ranks[q] = append(ranks[q], r.RanksUS[q])
			}
		}
	}
	out.MinUS = minUS
	out.RanksUS = make([]float64, len(ranks))
	for q, v := range ranks {
		sort.Float64s(v)
		out.RanksUS[q] = v[(len(v)-1)/2]
	}
	return out
}

// clonePtr copies *p, so a merged result shares no figure with its rounds.
func clonePtr(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func containsConfig(cs []space.Config, key space.ConfigKey) bool {
	for _, c := range cs {
		if c.Key() == key {
			return true
		}
	}
	return false
}

// store writes the winner to the cache.
func (ss *session) store(ctx context.Context) error {
	o := ss.out
	if o.Best == nil {
		return errors.New("no config ran correctly; nothing to cache")
	}
	trials := 0
	for _, r := range o.Results {
		if !r.Refined {
			trials++
		}
	}
	e := cache.Entry{
		Key: cache.Key{
			Kernel: ss.job.Kernel, KernelVersion: o.Desc.KernelVersion, Backend: ss.backend,
			Hardware: o.Hardware.ID(), World: ss.job.World, Dtype: ss.job.Dtype, Shape: o.Shape,
		},
		HardwareInfo: o.Hardware,
		Config:       o.Best.Config,
		MedianUS:     o.Best.Score(),
		MinUS:        deref(o.Best.MinUS),
		P90US:        deref(o.Best.P90US),
		Trials:       trials,
		TunedAt:      time.Now().UTC().Truncate(time.Second),
	}
	if o.Default != nil && o.Default.Status == StatusOK {
		e.DefaultMedianUS = o.Default.Score()
	}
	desc := o.Desc
	// A stored entry of this very plugin build whose config is not in its
	// space was damaged or forged: it must not keep this winner out.
	reject := func(stored cache.Entry) error {
		if stored.Kernel != e.Kernel || stored.KernelVersion != e.KernelVersion {
			return nil
		}
		if err := desc.Space.Check(stored.Config); err != nil {
			return fmt.Errorf("config %s is not in the plugin's space: %w", stored.Config, err)
		}
		return nil
	}
	kept, m, err := ss.s.putWinner(ctx, e, reject)
	if err != nil {
		return &StoreError{Err: err}
	}
	o.Entry, o.Kept = &e, kept
	o.SetAside, o.SetAsideTo = m.SetAside, m.SetAsideTo
	return nil
}

// deref reads an optional timing; 0 stands for "not measured", which the
// cache accepts (it refuses NaN).
func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
