package tuner

import (
	"context"
	"fmt"
	"time"

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
			if ok && ss.out.Budget.Auto && job.BudgetTime <= 0 {
				// A job without a budget is planned once: it stays short
				// when its trials run faster than the first, but says so.
				ss.out.Budget.Note += paceNote(len(valid), trials, fresh, took, time.Since(began))
			}
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
