package tuner

import (
	"fmt"
	"strings"
	"time"
)

// Budget is the budget a job's exploration ran under, and why.
type Budget struct {
	// Trials caps the exploration's trials (the valid configs' count when
	// nothing else does); Time caps its wall time (0: no cap).
	Trials int
	Time   time.Duration
	// Auto is set when the search planned the budget itself (the job gave
	// none: AutoBudget), from Timed trials that took PerTrial each.
	Auto     bool
	Timed    int
	PerTrial time.Duration
	// Note says in one line what was chosen and why, for the summary.
	Note string
}

// Planning the budget of a job given none: the first calibrationTrials
// trials run in this search (resumed ones cost nothing and do not count)
// are timed, or fewer when they take a calibrationShare-th of the job time
// already, and the budget is what fits in what is left of the job time at
// their pace. Five trials hold a GPU search's first-trial effects (the
// first config's warm-up, a cold cache) to a fifth of the estimate, and
// cost about 6 s of the five minutes at 1.2 s a trial.
const (
	calibrationTrials = 5
	calibrationShare  = 10
)

// calibrated reports whether fresh trials that took took are enough to
// plan a budget for jobTime.
func calibrated(fresh int, took, jobTime time.Duration) bool {
	return fresh >= calibrationTrials || (fresh > 0 && took*calibrationShare >= jobTime)
}

// autoBudget plans the trial budget of a job given none, with valid valid
// configs, after done trials (resumed ones included) of which fresh were
// run in this search and took took, spent into the exploration: every
// valid config when all fit in jobTime at that pace, else as many trials
// as fit in what is left of it (never fewer than done). The exploration
// stops when jobTime is up either way: later trials may be slower.
// given says jobTime is the job's own time budget (--budget-time), not the
// time a job without a budget may take. strategy names the strategy that
// runs under the budget.
func autoBudget(valid, done, fresh int, took, spent, jobTime time.Duration, given bool, strategy func(trials int) string) Budget {
	b := Budget{Trials: valid, Time: jobTime, Auto: true, Timed: fresh}
	if fresh > 0 {
		b.PerTrial = took / time.Duration(fresh)
	}
	pace := fmt.Sprintf("%d trials took %s each", fresh, seconds(b.PerTrial))
	if fresh == 1 {
		pace = fmt.Sprintf("the first trial took %s", seconds(b.PerTrial))
	}
	all := spent + time.Duration(valid-done)*b.PerTrial
	within := fmt.Sprintf("the %s a job without a budget may explore", jobTime)
	limit := fmt.Sprintf("a job without a budget explores for at most %s", jobTime)
	if given {
		within = fmt.Sprintf("the job's %s", jobTime)
		limit = fmt.Sprintf("the job explores for at most %s", jobTime)
	}
	if b.PerTrial <= 0 || all <= jobTime {
		b.Note = fmt.Sprintf("every valid config (%d; auto: %s, about %s for all, within %s)",
			valid, pace, roughly(all), within)
		return b
	}
	more := 0
	if left := jobTime - spent; left > 0 {
		more = int(left / b.PerTrial)
	}
	b.Trials = min(valid, done+more)
	b.Note = fmt.Sprintf("%d of %d valid configs, strategy %s (auto: %s, so all would take about %s; %s; --budget-trials, --budget-time or --exhaustive choose another)",
		b.Trials, valid, strategy(b.Trials), pace, roughly(all), limit)
	return b
}

// maxReplans bounds how often a time-planned budget is planned again
// (see replanned): each time the pace so far, compiles diluted by more
// trials, gives a truer count.
const maxReplans = 3

// replanned is the trial budget of a time-planned exploration whose
// budget ran out after done trials, fresh of them run in this search in
// took, spent into jobTime, after replans earlier replans: done plus the
// trials that fit in what is left at the pace so far, at most valid. ok
// is false when no more trial fits, the space is done, or maxReplans is
// reached.
func replanned(valid, done, fresh int, took, spent, jobTime time.Duration, replans int) (trials int, ok bool) {
	if replans >= maxReplans || done >= valid || fresh == 0 || took <= 0 || spent >= jobTime {
		return done, false
	}
	more := int((jobTime - spent) / (took / time.Duration(fresh)))
	if more < 1 {
		return done, false
	}
	return min(valid, done+more), true
}

// paceNote is the note's addition when a job without a budget has run the
// trials planned from its first ones (done, fresh of them in took, spent
// since it began) with time left: the pace they ran at, and what all valid
// configs would take at it, which the planned estimate (slowed by the
// first trials' compiles) overstates.
func paceNote(valid, done, fresh int, took, spent time.Duration) string {
	if fresh == 0 || took <= 0 {
		return ""
	}
	per := took / time.Duration(fresh)
	return fmt.Sprintf("; they were done after %s, at %s a trial run, so all %d would take about %s (a job without a budget is planned once; --budget-time plans again while time is left)",
		roughly(spent), seconds(per), valid, roughly(spent+time.Duration(valid-done)*per))
}

// unplannedBudget is the budget of a job given none whose space ran out
// before enough trials were timed to plan one: every valid config ran.
func unplannedBudget(valid int, jobTime time.Duration) Budget {
	return Budget{Trials: valid, Time: jobTime, Auto: true,
		Note: fmt.Sprintf("every valid config (%d; auto: no more than the %d trials a budget is planned from)", valid, calibrationTrials)}
}

// givenBudget is the budget a job sets itself: BudgetTrials (0: none) and
// BudgetTime (0: none).
func givenBudget(job Job, valid int) Budget {
	b := Budget{Trials: valid, Time: job.BudgetTime}
	var caps []string
	if job.BudgetTrials > 0 && job.BudgetTrials < valid {
		b.Trials = job.BudgetTrials
		caps = append(caps, fmt.Sprintf("%d of %d valid configs", job.BudgetTrials, valid))
	}
	if job.BudgetTime > 0 {
		caps = append(caps, fmt.Sprintf("%s of exploration", job.BudgetTime))
	}
	if len(caps) == 0 {
		b.Note = fmt.Sprintf("every valid config (%d), as the job asks", valid)
	} else {
		b.Note = "at most " + strings.Join(caps, " or ") + ", as the job asks"
	}
	return b
}

// seconds formats a trial's time: "1.21 s", "0.018 s".
func seconds(d time.Duration) string {
	if d < time.Second/10 {
		return fmt.Sprintf("%.3f s", d.Seconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// roughly formats an estimate of a longer time to the second ("1h4m55s"),
// or below a second in tenths ("0.4s").
func roughly(d time.Duration) string {
	if d < time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
