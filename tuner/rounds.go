package tuner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/space"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// explore runs the strategy phase.
func (ss *session) explore(ctx context.Context, valid []space.Config) error {
	job := ss.job
	budget := job.BudgetTrials
	if budget <= 0 || budget > len(valid) {
		budget = len(valid)
	}
	strat, err := strategy.New(job.Strategy, strategy.Problem{
		Space: ss.out.Desc.Space, Valid: valid, Default: ss.out.Desc.Default, Budget: budget, Seed: job.Seed,
	})
	if err != nil {
		return &InputError{err}
	}
	if c, ok := strat.(interface{ Close() }); ok {
		defer c.Close()
	}
	ss.strategy = strat.Name()
	ss.s.Reporter.Start(job, budget)
	began := time.Now()
	var history []strategy.Observation
	var best *Result
	trials := 0
	for trials < budget {
		if job.BudgetTime > 0 && time.Since(began) >= job.BudgetTime {
			ss.s.Logger.Info("time budget reached", "kernel", job.Kernel, "trials", trials)
			break
		}
		batch := strat.Next(history)
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			if trials >= budget || (job.BudgetTime > 0 && time.Since(began) >= job.BudgetTime) {
				break
			}
			res, err := ss.measure(ctx, c, job.Iters, false)
			if err != nil {
				return err
			}
			trials++
			ss.out.Counts[res.Status]++
			history = append(history, strategy.Observation{Config: c, ScoreUS: res.Score(), OK: res.Status == StatusOK})
			if res.Status == StatusOK && (best == nil || res.Score() < best.Score()) {
				r := res
				best = &r
			}
			ss.s.Reporter.Trial(trials, budget, res, best)
		}
	}
	ss.out.Counts[StatusInvalid] = ss.out.SpaceSize - len(valid)
	return nil
}

// measure runs (or takes from the resume log) one trial, logs it, and
// restarts the group when the trial left it unusable.
func (ss *session) measure(ctx context.Context, c space.Config, iters int, refined bool) (Result, error) {
	if !refined {
		if r, ok := ss.s.Done.take(ss.jobKey(), c); ok {
			ss.out.Results = append(ss.out.Results, r)
			return r, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	t := trialSpec{Config: c, Warmup: ss.job.Warmup, Iters: iters, Timeouts: ss.job.Timeouts}
	t.Timeouts.Verify = ss.deadline("verify", t.Timeouts.Verify)
	t.BenchDeadline = benchDeadline(t.Timeouts.Bench, ss.iterUS, t.Warmup+t.Iters)
	res, restart, took := ss.grp.runTrial(ctx, t)
	if ctx.Err() != nil {
		// The trial was cut short by the interrupt, not by the config:
		// it is not a result and is not logged.
		return Result{}, ctx.Err()
	}
	if res.Status == StatusOK {
		// Verify and bench durations, for deadlines scaled to the work.
		ss.slowest["verify"] = max(ss.slowest["verify"], took.Verify)
		perIter := float64(took.Bench.Microseconds()) / float64(t.Warmup+t.Iters)
		ss.iterUS = max(ss.iterUS, perIter)
	}
	res.Refined = refined
	ss.stamp(&res)
	ss.out.Results = append(ss.out.Results, res)
	if ss.s.Log != nil {
		if err := ss.s.Log.Write(res); err != nil {
			return res, err
		}
	}
	if res.Status != StatusOK {
		ss.s.Logger.Debug("trial did not pass", "config", c.String(), "status", res.Status, "err", res.Error)
	}
	if restart {
		ss.s.Logger.Info("restarting ranks", "after", res.Status, "config", c.String())
		if err := ss.restartRetrying(ctx); err != nil {
			return res, fmt.Errorf("restart ranks after %s of %s: %w", res.Status, c, err)
		}
	}
	return res, nil
}

func (ss *session) stamp(r *Result) {
	r.Kernel, r.Backend, r.World, r.Dtype = ss.job.Kernel, ss.backend, ss.job.World, ss.job.Dtype
	r.Shape = ss.out.Shape.Format(ss.out.Desc.Dims...)
	r.Strategy, r.ValidConfigs, r.Hardware = ss.strategy, ss.out.ValidCount, ss.out.Hardware.ID()
	r.Default = r.Config.String() == ss.out.Desc.Default.String()
}

func (ss *session) jobKey() string {
	return resumeKey(ss.job.Kernel, ss.backend, ss.job.World, ss.job.Dtype, ss.out.Shape.Format(ss.out.Desc.Dims...))
}

// FinalistsWithin is how close to the best first-pass score a config must
// come to be re-measured as a finalist (besides the default, re-measured
// as the baseline): within 25%.
const FinalistsWithin = 1.25

// refine re-measures the finalists and the default with more iterations
// (successive halving's last rung): the first pass used few iterations, so
// its ranking near the top is noise-prone.
func (ss *session) refine(ctx context.Context) error {
	var obs []strategy.Observation
	for _, r := range ss.out.Results {
		obs = append(obs, strategy.Observation{Config: r.Config, ScoreUS: r.Score(), OK: r.Status == StatusOK})
	}
	finalists := strategy.Finalists(obs, ss.job.Finalists, FinalistsWithin)
	if len(finalists) == 0 {
		return nil
	}
	def := ss.out.Desc.Default.String()
	defaultOK := false
	for _, r := range ss.out.Results {
		if r.Config.String() == def && r.Status == StatusOK {
			defaultOK = true
			d := r
			ss.out.Default = &d
		}
	}
	if defaultOK && !containsConfig(finalists, def) {
		finalists = append(finalists, ss.out.Desc.Default)
	}
	iters := ss.job.Iters * ss.job.RefineFactor
	var best *Result
	for _, c := range finalists {
		res, err := ss.measure(ctx, c, iters, true)
		if err != nil {
			return err
		}
		if res.Status != StatusOK {
			ss.s.Logger.Warn("finalist failed its re-measurement; dropped", "config", c.String(), "status", res.Status)
			continue
		}
		if c.String() == def {
			r := res
			ss.out.Default = &r
		}
		if best == nil || res.Score() < best.Score() {
			r := res
			best = &r
		}
	}
	ss.out.Best = best
	return nil
}

func containsConfig(cs []space.Config, key string) bool {
	for _, c := range cs {
		if c.String() == key {
			return true
		}
	}
	return false
}

// store writes the winner to the cache.
func (ss *session) store() error {
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
	kept, err := ss.s.putWinner(e)
	if err != nil {
		return err
	}
	o.Entry, o.Kept = &e, kept
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
