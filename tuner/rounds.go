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

// explore runs the strategy phase under the job's budget. A job given no
// trial budget (AutoBudget) starts as if it had none, with the strategy
// that would run every valid config (auto: exhaustive, which measures a
// config of every family first), and times its first trials
// (calibrated); autoBudget then plans the trials that fit in its time:
// BudgetTime when the job gives one, else JobTime. When they are fewer
// than the valid configs, the job's strategy is made again for that
// budget (auto: the local search instead of exhaustive) and carries on
// from the trials so far. Either way the exploration ends when that time
// is up. A time budget alone once ran the exhaustive enumeration until
// time was up; on a GEMM space that measured pipelines only.
func (ss *session) explore(ctx context.Context, valid []space.Config) error {
	job := ss.job
	planning := job.BudgetTrials < 0
	budget := job.BudgetTrials
	if budget <= 0 || budget > len(valid) {
		budget = len(valid)
	}
	timeCap := job.BudgetTime
	if planning && timeCap <= 0 {
		timeCap = job.JobTime
	}
	if !planning {
		ss.out.Budget = givenBudget(job, len(valid))
	}
	strat, err := ss.newStrategy(valid, budget)
	if err != nil {
		return err
	}
	defer func() { strat.Close() }()
	ss.s.Reporter.Start(job, budget)
	began := time.Now()
	var history []strategy.Observation
	var best *Result
	trials := 0
	// Trials run in this search (not resumed) and their time, while
	// planning.
	fresh, took := 0, time.Duration(0)
	ranOut := "" // for the budget's note, when the time ran out
	replans := 0
	// A job given no budget is not cut short while its first trials are
	// timed (they end at a tenth of JobTime, or one trial past it); a time
	// budget the job gives is kept even then, once the first trial (the
	// default, the baseline) is in.
	timeUp := func() bool {
		return (!planning || job.BudgetTime > 0) && timeCap > 0 && trials > 0 && time.Since(began) >= timeCap
	}
	for {
		if trials >= budget {
			// A budget planned from the first trials' pace, which NVRTC
			// compiles and cold caches slow, runs out early: with time
			// left of the job's own budget, plan again at the pace so far.
			more, ok := replanned(len(valid), trials, fresh, took, time.Since(began), timeCap, replans)
			if !ok || !ss.out.Budget.Auto || job.BudgetTime <= 0 {
				break
			}
			replans++
			budget = more
			ss.out.Budget.Trials = more
			ss.out.Budget.Note += fmt.Sprintf("; planned again for %d trials after %d, with %s left", more, trials, roughly(timeCap-time.Since(began)))
			ss.s.Logger.Info("budget planned again", "kernel", job.Kernel, "trials", more)
			strat.Close()
			if strat, err = ss.newStrategy(valid, budget); err != nil {
				return err
			}
		}
		if timeUp() {
			ss.s.Logger.Info("time budget reached", "kernel", job.Kernel, "trials", trials)
			ranOut = fmt.Sprintf("; its time ran out after %d trials, %s", trials, ss.familiesNote(valid, history))
			break
		}
		batch := strat.Next(history)
		if len(batch) == 0 {
			break
		}
		for _, c := range batch {
			if trials >= budget || timeUp() {
				break
			}
			t0 := time.Now()
			res, resumed, err := ss.measure(ctx, c, job.Iters, false)
			if err != nil {
				return err
			}
			if !resumed {
				fresh++
				took += time.Since(t0)
			}
			trials++
			ss.out.Counts[res.Status]++
			history = append(history, strategy.Observation{Config: c, ScoreUS: res.Score(), OK: res.Status == StatusOK})
			if res.Status == StatusOK && (best == nil || res.Score() < best.Score()) {
				r := res
				best = &r
			}
			ss.s.Reporter.Trial(trials, budget, res, best)
			if !planning || !calibrated(fresh, took, timeCap) {
				continue
			}
			planning = false
			b := autoBudget(len(valid), trials, fresh, took, time.Since(began), timeCap, job.BudgetTime > 0, func(n int) string {
				return strategyFor(job.Strategy, n, len(valid))
			})
			ss.out.Budget, budget = b, b.Trials
			ss.s.Logger.Info("budget planned", "kernel", job.Kernel, "budget", b.Note)
			if r, ok := ss.s.Reporter.(BudgetReporter); ok {
				r.Budget(budget, b.Note)
			}
			if budget < len(valid) {
				// The batch was the first strategy's: the one made for
				// this budget proposes from here on.
				strat.Close()
				if strat, err = ss.newStrategy(valid, budget); err != nil {
					return err
				}
				break
			}
		}
	}
	if planning {
		ss.out.Budget = unplannedBudget(len(valid), timeCap)
	}
	ss.out.Budget.Note += ranOut
	ss.out.Counts[StatusInvalid] = ss.out.SpaceSize - len(valid)
	return nil
}

// familiesNote says which families of the space the measured trials
// cover, for a search that stopped on time: "measured 12 of 40 families
// (impl=...; ...), not 28 (...)", the longer list cut short.
func (ss *session) familiesNote(valid []space.Config, history []strategy.Observation) string {
	measured := make([]space.Config, len(history))
	for i, o := range history {
		measured[i] = o.Config
	}
	cov, err := strategy.Coverage(strategy.Problem{Space: ss.out.Desc.Space, Valid: valid, Default: ss.out.Desc.Default}, measured)
	if err != nil {
		return "families unknown: " + err.Error()
	}
	return cov.Note()
}

// newStrategy makes the job's strategy for a budget of trials, and names
// it in the trials logged from now on.
func (ss *session) newStrategy(valid []space.Config, budget int) (strategy.Strategy, error) {
	strat, err := strategy.New(ss.job.Strategy, strategy.Problem{
		Space: ss.out.Desc.Space, Valid: valid, Default: ss.out.Desc.Default, Budget: budget, Seed: ss.job.Seed,
	})
	if err != nil {
		return nil, &InputError{err}
	}
	ss.strategy = strat.Name()
	return ss.withSeeds(strat), nil
}

// strategyFor is the strategy that name resolves to for budget trials of
// valid configs (auto: exhaustive when they cover every one, else
// strategy.AutoChoice), for the budget's note.
func strategyFor(name string, budget, valid int) string {
	if name != strategy.Auto {
		return name
	}
	if budget >= valid {
		return strategy.Exhaustive
	}
	return strategy.AutoChoice
}

// BudgetReporter is a Reporter that is also told, when a job given no
// budget has planned one, the trial total that replaces the one Start
// was given (the valid configs) and the budget's note.
type BudgetReporter interface {
	Budget(total int, note string)
}

// measure runs (or takes from the resume log) one trial, logs it, and
// restarts the group when the trial left it unusable. resumed says the
// result came from the resume log, not a trial.
func (ss *session) measure(ctx context.Context, c space.Config, iters int, refined bool) (res Result, resumed bool, err error) {
	if !refined {
		if r, ok := ss.s.Done.take(ss.jobKey(), c); ok {
			ss.out.Results = append(ss.out.Results, r)
			return r, true, nil
		}
	}
	res, restart, err := ss.trial(ctx, c, iters)
	if err != nil {
		return Result{}, false, err
	}
	res.Refined = refined
	return res, false, ss.record(ctx, res, restart)
}

// trial runs c once on the group and returns its result, not yet recorded,
// and whether the group must restart after it; the error is only the
// context's (a trial cut short by an interrupt is not a result). With
// Job.Warm and no call time known yet, c first runs with the plain
// warm-up to measure one (that run is not a result).
func (ss *session) trial(ctx context.Context, c space.Config, iters int) (Result, bool, error) {
	if ss.job.Warm > 0 && ss.callUS == 0 {
		res, restart, err := ss.run(ctx, c, ss.job.Warmup, iters)
		if err != nil || res.Status != StatusOK || restart {
			return res, restart, err
		}
	}
	return ss.run(ctx, c, warmIters(ss.job.Warm, ss.callUS, ss.job.Warmup), iters)
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
func (ss *session) run(ctx context.Context, c space.Config, warmup, iters int) (Result, bool, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, false, err
	}
	t := trialSpec{Config: c, Warmup: warmup, Iters: iters, Timeouts: ss.job.Timeouts}
	t.Timeouts.Verify = ss.deadline("verify", t.Timeouts.Verify)
	t.BenchDeadline = benchDeadline(t.Timeouts.Bench, ss.iterUS, t.Warmup+t.Iters)
	res, restart, took := ss.grp.runTrial(ctx, t)
	ss.out.Time.addTrial(took)
	if ctx.Err() != nil {
		return Result{}, false, ctx.Err()
	}
	res.PrepareMS, res.VerifyMS, res.BenchMS = ms(took.Prepare), ms(took.Verify), ms(took.Bench)
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
// (successive halving's last rung): the first pass used few iterations, so
// its ranking near the top is noise-prone. The iterations are split over
// RefineRounds interleaved rounds; a finalist's re-measurement is its
// median round (roundsResult), logged once after the last round. A
// finalist that fails a round is logged with that round's result and
// dropped.
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
	perRound := (iters + RefineRounds - 1) / RefineRounds
	rounds := make(map[space.ConfigKey][]Result, len(finalists))
	dropped := map[space.ConfigKey]bool{}
	for round := 0; round < RefineRounds; round++ {
		for _, c := range rotated(finalists, round) {
			key := c.Key()
			if dropped[key] {
				continue
			}
			res, restart, err := ss.trial(ctx, c, perRound)
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
	var best *Result
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
		if best == nil || res.Score() < best.Score() {
			r := res
			best = &r
		}
	}
	ss.out.Best = best
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
