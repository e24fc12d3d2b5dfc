package tuner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symmtune/symmtune/cache"
	"github.com/symmtune/symmtune/tuner/strategy"
)

// TestAutoBudget plans budgets from made-up paces: no clock is read, so
// no machine's load can change the answers.
func TestAutoBudget(t *testing.T) {
	s := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	for _, tc := range []struct {
		name               string
		valid, done, fresh int
		took, spent, job   time.Duration
		want               int
		note               string           // how the note starts
		names              func(int) string // the strategy for a budget (default: auto's choice)
		wantPerTrial       time.Duration
		given              bool // the job's own time budget
	}{
		{name: "agmm on 2 GPUs: 3,216 configs at 1.2 s a trial", valid: 3216, done: 5, fresh: 5, took: s(6), spent: s(6), job: 5 * time.Minute,
			want: 5 + 245, note: "250 of 3216 valid configs, strategy bandit (auto: 5 trials took 1.20 s each, so all would take about 1h4m19s; a job without a budget explores for at most 5m0s;",
			wantPerTrial: s(1.2)},
		{name: "the quickstart's all-reduce: everything fits", valid: 11, done: 5, fresh: 5, took: s(0.12), spent: s(0.12), job: 5 * time.Minute,
			want: 11, note: "every valid config (11; auto: 5 trials took 0.024 s each, about 300ms for all, within the 5m0s", wantPerTrial: s(0.024)},
		{name: "all fit exactly", valid: 100, done: 5, fresh: 5, took: s(15), spent: s(15), job: 5 * time.Minute, want: 100, note: "every valid config (100;"},
		{name: "one more than fits", valid: 101, done: 5, fresh: 5, took: s(15), spent: s(15), job: 5 * time.Minute, want: 100, note: "100 of 101 valid configs"},
		{name: "a first trial longer than the job time: no more trials", valid: 10, done: 1, fresh: 1, took: 6 * time.Minute, spent: 6 * time.Minute, job: 5 * time.Minute,
			want: 1, note: "1 of 10 valid configs, strategy bandit (auto: the first trial took 360.00 s,"},
		{name: "resumed trials count in the budget, not in the pace", valid: 1000, done: 8, fresh: 5, took: s(5), spent: s(5), job: s(10),
			want: 8 + 5, note: "13 of 1000 valid configs, strategy bandit (auto: 5 trials took 1.00 s each"},
		{name: "a time budget the job gives: planned the same way, and named", valid: 3216, done: 5, fresh: 5, took: s(6), spent: s(6), job: 10 * time.Minute, given: true,
			want: 5 + 495, note: "500 of 3216 valid configs, strategy bandit (auto: 5 trials took 1.20 s each, so all would take about 1h4m19s; the job explores for at most 10m0s;"},
		{name: "an explicit strategy is named as it is", valid: 1000, done: 5, fresh: 5, took: s(5), spent: s(5), job: s(10),
			names: func(int) string { return strategy.Random }, want: 10, note: "10 of 1000 valid configs, strategy random"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := tc.names
			if names == nil {
				names = func(n int) string { return strategyFor(strategy.Auto, n, tc.valid) }
			}
			b := autoBudget(tc.valid, tc.done, tc.fresh, tc.took, tc.spent, tc.job, tc.given, names)
			if b.Trials != tc.want || !b.Auto || b.Time != tc.job || b.Timed != tc.fresh {
				t.Errorf("budget %+v, want %d trials, auto, time %s, %d timed", b, tc.want, tc.job, tc.fresh)
			}
			if tc.wantPerTrial > 0 && b.PerTrial != tc.wantPerTrial {
				t.Errorf("per trial %s, want %s", b.PerTrial, tc.wantPerTrial)
			}
			if !strings.HasPrefix(b.Note, tc.note) || strings.Contains(b.Note, "\n") {
				t.Errorf("note\n%s\nwant one line starting\n%s", b.Note, tc.note)
			}
		})
	}
}

// TestCalibrated: the budget is planned after calibrationTrials trials, or
// sooner when they already took a calibrationShare-th of the job time.
func TestCalibrated(t *testing.T) {
	for _, tc := range []struct {
		fresh int
		took  time.Duration
		want  bool
	}{
		{0, 0, false},
		{0, time.Hour, false},
		{1, time.Second, false},
		{4, 29 * time.Second, false},
		{5, time.Second, true},
		{1, 30 * time.Second, true},
		{2, time.Minute, true},
	} {
		if got := calibrated(tc.fresh, tc.took, 5*time.Minute); got != tc.want {
			t.Errorf("calibrated(%d trials, %s, 5m) = %v, want %v", tc.fresh, tc.took, got, tc.want)
		}
	}
}

// TestGivenBudget: a budget the job sets is said as it is.
func TestGivenBudget(t *testing.T) {
	for _, tc := range []struct {
		trials int
		time   time.Duration
		want   int
		note   string
	}{
		{0, 0, 50, "every valid config (50), as the job asks"},
		{30, 0, 30, "at most 30 of 50 valid configs, as the job asks"},
		{80, 0, 50, "every valid config (50), as the job asks"},
		{0, 10 * time.Minute, 50, "at most 10m0s of exploration, as the job asks"},
		{AutoBudget, 10 * time.Minute, 50, "at most 10m0s of exploration, as the job asks"},
		{30, time.Minute, 30, "at most 30 of 50 valid configs or 1m0s of exploration, as the job asks"},
	} {
		b := givenBudget(Job{BudgetTrials: tc.trials, BudgetTime: tc.time}, 50)
		if b.Trials != tc.want || b.Time != tc.time || b.Auto || b.Note != tc.note {
			t.Errorf("budget_trials %d, budget_time %s: %+v, want %d trials, note %q", tc.trials, tc.time, b, tc.want, tc.note)
		}
	}
}

// TestAutoBudgetEndsAtTheJobTime: a job given no budget whose job time is
// already up after its first trial (a nanosecond) plans a budget of that
// one trial, the default config, instead of running the other eight; auto
// then names auto's choice (strategy.AutoChoice), which the budget no longer lets run. No
// timing threshold: any trial takes more than a nanosecond.
func TestAutoBudgetEndsAtTheJobTime(t *testing.T) {
	dir, _ := faultyPluginDir(t)
	tmp := t.TempDir()
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Logger: quietLogger()}
	job := faultyJob(2)
	job.Strategy, job.BudgetTrials, job.JobTime = strategy.Auto, AutoBudget, time.Nanosecond
	o, err := s.Search(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, r := range o.Results {
		if !r.Refined {
			first++
			if r.Config["mode"].Str != "medium" {
				t.Errorf("first pass measured %s; want only the default (medium)", r.Config)
			}
		}
	}
	b := o.Budget
	if first != 1 || b.Trials != 1 || !b.Auto || b.Timed != 1 || b.Time != time.Nanosecond {
		t.Errorf("%d first-pass trials, budget %+v; want 1 trial, planned from 1 timed", first, b)
	}
	if want := "1 of 9 valid configs, strategy bandit (auto: the first trial took "; !strings.HasPrefix(b.Note, want) {
		t.Errorf("note %q, want it to start %q", b.Note, want)
	}
	if o.Best == nil || o.Best.Config["mode"].Str != "medium" {
		t.Errorf("winner %v, want the default (medium), the only config measured", o.Best)
	}
}

// TestAutoBudgetTimesOnlyTrialsRun: a resumed search's logged trials cost
// nothing and are not timed; the budget is planned from the first trial
// the search runs, and counts the resumed ones. With a job time of a
// nanosecond, the two resumed trials and the first one run are the whole
// first pass.
func TestAutoBudgetTimesOnlyTrialsRun(t *testing.T) {
	// Exhaustive order starts with medium (the default), deadlock, fast:
	// the first two come from the log (deadlock logged as a slow pass, so
	// it is no finalist and never runs), fast is the first trial run.
	o, modes := resumedSearch(t, func(job *Job) { job.JobTime = time.Nanosecond },
		resumedTrial("medium", 20000), resumedTrial("deadlock", 1e9))
	if b := o.Budget; strings.Join(modes, " ") != "medium deadlock fast" || b.Trials != 3 || b.Timed != 1 {
		t.Errorf("first pass %v, budget %+v; want medium, deadlock (resumed) and fast, a budget of 3 planned from 1 timed trial", modes, b)
	}
}

// TestTimeBudgetSaysWhichFamiliesRan: a job whose own time budget (a
// nanosecond) is up after its first trial, taken from a resume log so that
// no budget is planned from it, stops there and says which families it
// measured: the default's mode of the nine. No timing threshold: any
// search takes more than a nanosecond.
func TestTimeBudgetSaysWhichFamiliesRan(t *testing.T) {
	o, modes := resumedSearch(t, func(job *Job) { job.BudgetTime = time.Nanosecond }, resumedTrial("medium", 20000))
	if strings.Join(modes, " ") != "medium" {
		t.Errorf("first pass %v, want the default (medium) alone", modes)
	}
	if want := "; its time ran out after 1 trials, measured 1 of 9 families (mode=medium); not measured: "; !strings.Contains(o.Budget.Note, want) {
		t.Errorf("note %q, want it to say %q", o.Budget.Note, want)
	}
}

// resumedTrial is a trial log line of the faulty plugin's config mode.
func resumedTrial(mode string, score float64) string {
	return fmt.Sprintf(`{"config":{"mode":%q},"status":"ok","score_us":%g,"ranks_us":[%g,%g],"iters":5,"kernel":"faulty","backend":"cpu","world":2,"dtype":"f32","shape":"n=1024","elapsed_ms":1}`,
		mode, score, score, score)
}

// resumedSearch runs an auto-budgeted faulty job, set by setJob, that
// resumes from a log of the given lines: its outcome and the modes of its
// first pass, in order.
func resumedSearch(t *testing.T, setJob func(*Job), lines ...string) (*Outcome, []string) {
	t.Helper()
	dir, _ := faultyPluginDir(t)
	tmp := t.TempDir()
	resumeLog := filepath.Join(tmp, "resume.jsonl")
	if err := os.WriteFile(resumeLog, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done, err := LoadResume(resumeLog)
	if err != nil {
		t.Fatal(err)
	}
	s := &Searcher{PluginDir: dir, Cache: cache.File{Path: filepath.Join(tmp, "configs.toml")}, Logger: quietLogger(), Done: done}
	job := faultyJob(2)
	job.Strategy, job.BudgetTrials = strategy.Auto, AutoBudget
	setJob(&job)
	o, err := s.Search(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	var modes []string
	for _, r := range o.Results {
		if !r.Refined {
			modes = append(modes, r.Config["mode"].Str)
		}
	}
	return o, modes
}

func TestReplanned(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name                     string
		valid, done, fresh, reps int
		took, spent, jobTime     time.Duration
		want                     int
		ok                       bool
	}{
		{"time left at the pace so far", 3248, 120, 120, 0, 12 * s, 18 * s, 60 * s, 120 + 420, true},
		{"capped by the space", 300, 120, 120, 0, 12 * s, 18 * s, 60 * s, 300, true},
		{"resumed trials cost nothing", 3248, 150, 100, 0, 10 * s, 20 * s, 60 * s, 150 + 400, true},
		{"no time left", 3248, 120, 120, 0, 12 * s, 60 * s, 60 * s, 120, false},
		{"less than a trial left", 3248, 120, 120, 0, 12 * s, 59950 * time.Millisecond, 60 * s, 120, false},
		{"space done", 120, 120, 120, 0, 12 * s, 18 * s, 60 * s, 120, false},
		{"nothing timed", 3248, 120, 0, 0, 0, 18 * s, 60 * s, 120, false},
		{"replanned enough", 3248, 120, 120, maxReplans, 12 * s, 18 * s, 60 * s, 120, false},
	} {
		got, ok := replanned(tc.valid, tc.done, tc.fresh, tc.took, tc.spent, tc.jobTime, tc.reps)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPaceNote(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name               string
		valid, done, fresh int
		took, spent        time.Duration
		want               string
	}{
		{"the pace of the trials run", 3248, 909, 909, 27 * s, 28 * s, "; they were done after 28s, at 0.030 s a trial run, so all 3248 would take about 1m37s (a job without a budget is planned once; --budget-time plans again while time is left)"},
		{"resumed trials cost nothing", 100, 50, 25, 25 * s, 26 * s, "; they were done after 26s, at 1.00 s a trial run, so all 100 would take about 1m16s (a job without a budget is planned once; --budget-time plans again while time is left)"},
		{"nothing timed", 100, 50, 0, 0, 2 * s, ""},
	} {
		if got := paceNote(tc.valid, tc.done, tc.fresh, tc.took, tc.spent); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
